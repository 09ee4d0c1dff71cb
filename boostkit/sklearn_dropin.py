"""Drop-in replacements for scikit-learn's ``AdaBoostClassifier`` and ``AdaBoostRegressor`` (needs
the ``sklearn`` extra), importable from :mod:`boostkit.sklearn`: the same signature, defaults,
attributes and results, fitted by boostkit's native learners (docs/dropin.md).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_sample_weight,
    _num_samples,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from .data import MAX_BINS, check_sample_weight
from .engine import Booster
from .plugins import get_registry
from .sklearn_order import BestSplitterTieOrder, column_priority
from .sklearn_native import (
    MAX_NATIVE_DEPTH,
    R2Tree,
    SammeEstimator,
    as_tree_input,
    at_midpoints,
    clip_columns,
    exact_columns,
    expand,
    grown_by_tree_learner,
    native_regression_tree,
    native_tree,
    term_importances,
)

__all__ = ["AdaBoostClassifier", "AdaBoostRegressor"]



# -- drop-in replacements for scikit-learn's AdaBoost estimators ----------------------------------
#
# AdaBoostClassifier is scikit-learn's SAMME run by the engine: the recipe ``samme`` with Gini
# stumps or, for deeper trees, the ``tree`` learner with CART's midpoint thresholds. Its
# decision function, probabilities and staged outputs are computed from the fitted terms the way
# scikit-learn computes them from its estimators (see docs/dropin.md).

#: scikit-learn's ensembles draw their estimators' seeds below this (np.iinfo(np.int32).max).
_INT32_MAX = np.iinfo(np.int32).max


def _check_base_estimator(estimator, kind: str):
    """Refuse, clearly, an estimator that cannot be boosted as a ``kind``."""
    from sklearn.base import is_classifier, is_regressor

    if estimator is None:
        return
    if not (callable(getattr(estimator, "fit", None)) and callable(getattr(estimator, "predict", None))):
        raise ValueError(
            f"estimator must be a scikit-learn {kind} with fit and predict methods, got "
            f"{type(estimator).__name__}"
        )
    wrong = is_regressor(estimator) if kind == "classifier" else is_classifier(estimator)
    if wrong:
        raise ValueError(
            f"estimator must be a {kind}, got the "
            f"{'regressor' if kind == 'classifier' else 'classifier'} {type(estimator).__name__}"
        )


def _sample_weight_fit_param(estimator) -> bool:
    from sklearn.utils.validation import has_fit_parameter

    return has_fit_parameter(estimator, "sample_weight")


def _seed_keys(estimator) -> list[str]:
    """The parameters scikit-learn's ensembles seed in each clone of ``estimator``, in the
    order they draw the seeds (``sklearn.ensemble._base._set_random_states``)."""
    return [key for key in sorted(estimator.get_params(deep=True))
            if key == "random_state" or key.endswith("__random_state")]


def _worse_than_random(eps: float, n_classes: int) -> ValueError:
    """scikit-learn's error when the first estimator is no better than chance."""
    return ValueError(
        "BaseClassifier in AdaBoostClassifier ensemble is worse than random, ensemble can not "
        f"be fit: the first estimator's weighted error {eps:.6g} is >= 1 - 1/K = "
        f"{1.0 - 1.0 / n_classes:.6g}"
    )


def _warn_overflow(t: int) -> None:
    """scikit-learn's warning when the weights overflow at large learning rates."""
    import warnings

    warnings.warn(
        f"Sample weights have reached infinite values, at iteration {t}, causing overflow. "
        "Iterations stopped. Try lowering the learning rate.",
        UserWarning, stacklevel=3,
    )


class _DropInAdaBoost:
    """What the drop-in AdaBoost estimators share: scikit-learn's checks of ``n_estimators`` and
    ``learning_rate``, sparse input, a fit that leaves the estimator as it was when it fails,
    and the weighted feature importances."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _check_rounds_and_rate(self):
        n = self.n_estimators
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n_estimators must be a positive integer, got {n!r}")
        nu = self.learning_rate
        if (isinstance(nu, bool) or not isinstance(nu, (int, float, np.integer, np.floating))
                or not 0.0 < nu < np.inf):
            raise ValueError(f"learning_rate must be a number > 0, got {nu!r}")

    def fit(self, X, y, sample_weight=None):
        """Build the boosted model from ``(X, y)``; a failed fit leaves the estimator as it
        was."""
        before = dict(self.__dict__)
        try:
            return self._fit(X, y, sample_weight)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    @property
    def feature_importances_(self):
        """sum_t alpha_t importances_t / sum_t alpha_t, the estimators' normalised impurity
        decreases weighted as in scikit-learn."""
        check_is_fitted(self)
        try:
            return sum(w * e.feature_importances_
                       for w, e in zip(self.estimator_weights_, self.estimators_)
                       ) / self.estimator_weights_.sum()
        except AttributeError as exc:
            raise AttributeError(
                "Unable to compute feature importances since estimator does not have a "
                "feature_importances_ attribute"
            ) from exc


class AdaBoostClassifier(_DropInAdaBoost, ClassifierMixin, BaseEstimator):
    """scikit-learn's ``AdaBoostClassifier`` (SAMME), fitted by boostkit's engine.

    Same signature, defaults, fitted attributes and results as
    ``sklearn.ensemble.AdaBoostClassifier``: with ``estimator=None`` or a
    ``DecisionTreeClassifier(max_depth=d)`` (d <= 8, criterion ``"gini"``, ``"entropy"`` or
    ``"log_loss"``, ``min_samples_leaf`` any, the other parameters at their defaults) the recipe
    ``samme`` runs natively on binned features: Gini stumps (``stump``) for d = 1, the ``tree``
    learner for deeper trees. Features are compared as float32 values, as scikit-learn's trees
    do. Where every feature has at most ``max_bins`` distinct values (on training sets of at
    most 20 000 rows, up to 2033), the native fit searches the cuts scikit-learn's search and
    places thresholds at the midpoints of each node's training values; the ``stump`` and
    ``tree`` learners break exact ties between features by the random order in which
    scikit-learn's tree of the same round visits them (:mod:`boostkit.sklearn_order`); with
    more values the thresholds are quantile bin edges.

    Any other classifier that accepts ``sample_weight``, and a ``y`` of one class, is boosted by
    scikit-learn's own SAMME loop around the estimator itself, which then gets ``X`` as it was
    given (sparse, or of any dimension): the model is scikit-learn's. With ``n_iter_no_change``
    such an estimator runs through the engine's ``sklearn-estimator`` proposal instead, when a
    plugin provides it. Weights are multiplied and floored at float64 eps, and a fit whose
    weights overflow warns and stops, as in scikit-learn.

    Parameters
    ----------
    estimator:
        The weak learner (``None``: ``DecisionTreeClassifier(max_depth=1)``).
    n_estimators:
        Largest number of rounds.
    learning_rate:
        nu > 0 multiplying every estimator weight alpha_t = nu (ln((1 - eps_t) / eps_t) +
        ln(K - 1)), in the reweighting too.
    random_state:
        Seed of the fit: the validation split of early stopping, the estimator's seeds on the
        ``sklearn-estimator`` path, and the seeds of the trees whose feature order breaks exact
        ties on the native path (stumps and trees), drawn as scikit-learn draws its trees' seeds
        (``None``: from numpy's global generator, as scikit-learn does).
    n_iter_no_change, validation_fraction, tol:
        Early stopping (not in scikit-learn's AdaBoost; named as in its gradient boosting):
        with ``n_iter_no_change`` = k, a stratified ``validation_fraction`` of the training rows
        is held out, and boosting stops once the validation exponential loss (SAMME's loss) has
        not improved by more than ``tol`` for k rounds; the ensemble keeps its best round.
        ``None`` (default): no early stopping.
    max_bins:
        Quantile bins per feature (2..255) of the native learners.
    n_jobs:
        Threads of the native kernels.

    Attributes
    ----------
    estimators_:
        The fitted estimators, one per kept round: :class:`SammeEstimator` objects for the native
        learners (lightweight: ``predict``, ``classes_``, ``feature_importances_`` and the boostkit
        ``hypothesis``), the fitted scikit-learn estimators otherwise.
    estimator_weights_, estimator_errors_:
        Arrays of length ``n_estimators``: alpha_t and the weighted error eps_t of every kept
        round, 0 and 1 after the last (scikit-learn's convention; a perfect estimator gets weight
        1 and error 0).
    estimator_:
        The base estimator (a clone of ``estimator``, or the default stump).
    classes_, n_classes_, n_features_in_, feature_names_in_:
        As in scikit-learn.
    model_:
        The fitted :class:`boostkit.BoostModel` (``model_.records``: every round's record). Its
        recipe names the ``stump`` or ``tree`` proposal without the ``tie_order`` that guided
        the fit. ``None`` when scikit-learn's loop fitted the estimator itself.
    """

    def __init__(
        self,
        estimator=None,
        *,
        n_estimators=50,
        learning_rate=1.0,
        random_state=None,
        n_iter_no_change=None,
        validation_fraction=0.1,
        tol=1e-4,
        max_bins=MAX_BINS,
        n_jobs=1,
    ):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.random_state = random_state
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.tol = tol
        self.max_bins = max_bins
        self.n_jobs = n_jobs

    # -- parameters -------------------------------------------------------------------------------
    def _check_params(self):
        self._check_rounds_and_rate()
        k = self.n_iter_no_change
        if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
            raise ValueError(f"n_iter_no_change must be None or a positive integer, got {k!r}")
        _check_base_estimator(self.estimator, "classifier")

    def _recipe(self, learning_rate_supported: bool, seed):
        """``(proposal, calibration params)`` of the fit."""
        from sklearn.base import clone
        from sklearn.tree import DecisionTreeClassifier

        self.estimator_ = (DecisionTreeClassifier(max_depth=1) if self.estimator is None
                           else clone(self.estimator))
        native = native_tree(self.estimator_)
        if native is not None:
            depth, criterion, leaf = native
            if not grown_by_tree_learner(native):
                proposal = ("stump", {"criterion": criterion})
            else:
                proposal = ("tree", {"max_depth": depth, "criterion": criterion,
                                     "min_samples_leaf": leaf, "midpoints": True})
        else:
            if not _sample_weight_fit_param(self.estimator_):
                raise ValueError(f"{type(self.estimator_).__name__} doesn't support sample_weight.")
            if "sklearn-estimator" not in get_registry().components():
                raise ValueError(
                    f"estimator {type(self.estimator_).__name__} is not one the native learners "
                    "reproduce (a DecisionTreeClassifier of max_depth 1.."
                    f"{MAX_NATIVE_DEPTH}, splitter='best', default pruning parameters), and no "
                    "installed plugin provides the 'sklearn-estimator' proposal that fits any "
                    "scikit-learn estimator; use sklearn.ensemble.AdaBoostClassifier for it"
                )
            proposal = ("sklearn-estimator", {"estimator": self.estimator_, "random_state": seed})
        calibration = {"smoothing": 0.0}
        if self.learning_rate != 1.0:
            if not learning_rate_supported:
                raise ValueError(
                    "learning_rate != 1 needs the 'samme-alpha' calibration's learning_rate "
                    "parameter, which this boostkit version does not have"
                )
            calibration["learning_rate"] = float(self.learning_rate)
        return proposal, calibration

    # -- fitting --------------------------------------------------------------------------------
    def _fit(self, X, y, sample_weight):
        import attrs as _attrs

        from .plugins import get_registry

        self._check_params()
        X, y = validate_data(self, X, y, accept_sparse=["csr", "csc"], dtype=None,
                             allow_nd=True)
        check_classification_targets(y)
        y = column_or_1d(y)
        sample_weight = _check_sample_weight(
            sample_weight, X, dtype=np.float64, copy=True, ensure_non_negative=True
        )
        if sample_weight.sum() <= 0:
            raise ValueError("sample_weight must not be all zero")
        classes = np.unique(y)
        native = self.estimator is None or native_tree(self.estimator) is not None
        if classes.shape[0] < 2 or not (native or self.n_iter_no_change is not None):
            # One class, or an estimator the native learners do not reproduce (without early
            # stopping, which needs the engine): scikit-learn's own loop around the estimator.
            return self._fit_estimator_itself(X, y, sample_weight, classes)
        if X.ndim != 2:
            raise ValueError(
                f"X must be 2-D (n_samples, n_features) for the native learners of "
                f"{'DecisionTreeClassifier' if self.estimator is None else type(self.estimator).__name__}"
                f" and for early stopping, got an array of {X.ndim} dimensions, shape {X.shape}"
            )
        samme_fields = _attrs.fields_dict(get_registry().component("samme-alpha"))
        supported = "learning_rate" in samme_fields
        seed = self.random_state
        tree_seeds = None
        if self.estimator is None or native_tree(self.estimator) is not None:
            # scikit-learn seeds round t's tree with the t-th draw of this generator
            # (sklearn.ensemble._base._set_random_states); the native stumps and trees replay
            # that tree's feature order to break exact ties between features as it does.
            rounds = check_random_state(seed)
            tree_seeds = [rounds.randint(_INT32_MAX) for _ in range(int(self.n_estimators))]
        if seed is not None and not isinstance(seed, (int, np.integer)):  # a RandomState
            seed = int(check_random_state(seed).randint(_INT32_MAX))
        proposal, calibration = self._recipe(supported, seed)
        if proposal[0] == "sklearn-estimator" and "cell_labels" in samme_fields:
            # Cell l is the estimator's prediction classes_[l]: score that, as scikit-learn does.
            calibration["cell_labels"] = "index"
        stopping = ["samme-no-edge"]
        if self.n_iter_no_change is not None:
            stopping.append(("validation", {
                "validation_fraction": self.validation_fraction,
                "patience": int(self.n_iter_no_change),
                "metric": "exponential_loss",
                "min_delta": float(self.tol),
            }))
        booster = Booster(
            "samme", n_rounds=int(self.n_estimators), max_bins=self.max_bins, n_jobs=self.n_jobs,
            random_state=seed, proposal=proposal, stopping=stopping,
            # scikit-learn's weights: multiplied each round and floored at eps.
            params={"calibration": calibration,
                    "reweighting": {"floor": float(np.finfo(np.float64).eps)}},
        )
        columns = None
        if proposal[0] != "sklearn-estimator":
            X = as_tree_input(X)
            columns = exact_columns(X, sample_weight > 0, self.max_bins)
            if tree_seeds is not None:
                proposal[1]["tie_order"] = BestSplitterTieOrder(
                    tree_seeds, np.arange(X.shape[1]) if columns is None
                    else [j for j, _, _ in columns], proposal[1]["criterion"])
        elif hasattr(X, "toarray"):  # the sklearn-estimator proposal reads dense features
            X = X.toarray()
        model = booster.fit(clip_columns(X, columns), y, sample_weight)
        if tree_seeds is not None:
            # The tie order only guides the fit: the model's recipe leaves it out, so the model
            # saves without pickle.
            spec = model.recipe.proposal
            spec = _attrs.evolve(spec, params={k: v for k, v in spec.params.items()
                                               if k != "tie_order"})
            model = _attrs.evolve(model, recipe=_attrs.evolve(model.recipe, proposal=spec))
        if columns is not None and proposal[0] == "tree":
            # Below the root the learner's midpoints are of clipped values: move them to
            # scikit-learn's (a stump's bin edges are the midpoints of all training values).
            Xu, rows = expand(X, columns), np.flatnonzero(sample_weight > 0)
            model = _attrs.evolve(model, hypotheses=tuple(
                at_midpoints(h, Xu, rows) for h in model.hypotheses))
        self._columns = columns
        self._set_fitted(model, classes, X.shape[1], tree_seeds)
        if model.stop_reason == "weights-overflow":
            _warn_overflow(model.records[-1].round - 1)
        return self

    def _fit_estimator_itself(self, X, y, sample_weight, classes):
        """scikit-learn's SAMME loop (``AdaBoostClassifier.fit`` and ``_boost``) around the
        estimator itself: its seeds, weights floored at float64 eps, alpha_t = nu (ln((1 -
        eps_t) / eps_t) + ln(K - 1)), multiplicative updates, the stop on a perfect or a
        no-better-than-chance estimator, and the warning and stop when the weights overflow.
        ``X`` reaches the estimator as it was given (sparse, or of any dimension); ``model_`` is
        ``None``."""
        from sklearn.base import clone
        from sklearn.tree import DecisionTreeClassifier

        self.estimator_ = (DecisionTreeClassifier(max_depth=1) if self.estimator is None
                           else clone(self.estimator))
        if not _sample_weight_fit_param(self.estimator_):
            raise ValueError(f"{type(self.estimator_).__name__} doesn't support sample_weight.")
        rng = check_random_state(self.random_state)
        seed_keys = _seed_keys(self.estimator_)
        T, nu, K = int(self.n_estimators), float(self.learning_rate), classes.shape[0]
        estimators, alphas, errors = [], np.zeros(T), np.ones(T)
        weights = check_sample_weight(sample_weight, sample_weight.shape[0])  # sum may overflow
        tiny = np.finfo(np.float64).eps
        zero = weights == 0.0
        for t in range(T):
            weights = np.clip(weights, tiny, None)
            weights[zero] = 0.0  # the floor leaves rows of weight 0 out
            estimator = clone(self.estimator_)
            if seed_keys:
                estimator.set_params(**{key: rng.randint(_INT32_MAX) for key in seed_keys})
            estimator.fit(X, y, sample_weight=weights)
            estimators.append(estimator)
            incorrect = estimator.predict(X) != y
            eps = np.mean(np.average(incorrect, weights=weights, axis=0))
            if eps <= 0:  # perfect: weight 1, and stop
                alphas[t], errors[t] = 1.0, 0.0
                break
            if eps >= 1.0 - 1.0 / K:  # no better than chance: dropped, and stop
                estimators.pop()
                if not estimators:
                    raise _worse_than_random(eps, K)
                break
            alpha = nu * (np.log((1.0 - eps) / eps) + np.log(K - 1.0))
            alphas[t], errors[t] = alpha, eps
            if t < T - 1:
                with np.errstate(divide="ignore", over="ignore"):  # log(0) of rows of weight 0
                    weights = np.exp(np.log(weights) + alpha * incorrect * (weights > 0))
            total = np.sum(weights)
            if not np.isfinite(total):
                _warn_overflow(t)
                break
            if total <= 0:
                break
            if t < T - 1:
                weights /= total
        self.model_ = None
        self._columns = None
        self.classes_ = classes
        self.n_classes_ = K
        self.estimators_ = estimators
        self.estimator_weights_ = alphas
        self.estimator_errors_ = errors
        return self

    def _set_fitted(self, model, classes, n_features, seeds):
        n_classes = classes.shape[0]
        used = model.best_round if model.best_round is not None else model.n_rounds
        estimators, weights, errors = [], [], []
        for t, (h, c, record) in enumerate(zip(model.hypotheses[:used], model.contributions[:used],
                                               model.records[:used])):
            eps = float(record.extra["class_error"])
            if eps >= 1.0 - 1.0 / n_classes:  # no better than chance: scikit-learn drops it
                if t == 0:
                    raise _worse_than_random(eps, n_classes)
                break
            estimators.append(self._estimator(h, c, classes, n_features, self._columns,
                                              None if seeds is None else seeds[t]))
            if eps <= 0:  # a perfect estimator: scikit-learn gives it weight 1 and stops
                weights.append(1.0)
                errors.append(0.0)
                break
            weights.append(float(record.coefficients[0]))
            errors.append(eps)
        self.model_ = model
        self.classes_ = classes
        self.n_classes_ = n_classes
        self.estimators_ = estimators
        self.estimator_weights_ = np.zeros(self.n_estimators)
        self.estimator_weights_[: len(weights)] = weights
        self.estimator_errors_ = np.ones(self.n_estimators)
        self.estimator_errors_[: len(errors)] = errors

    @staticmethod
    def _estimator(hypothesis, contribution, classes, n_features, columns, seed):
        fitted = getattr(hypothesis, "estimator", None)
        if fitted is not None:
            return fitted  # the sklearn-estimator proposal's fitted estimator: it votes its class
        values = np.asarray(contribution.cell_values)
        cell_classes = values.argmax(axis=1) if values.ndim == 2 else (values > 0).astype(np.intp)
        return SammeEstimator(hypothesis, cell_classes, classes, n_features,
                              term_importances(hypothesis, n_features, columns), columns, seed)

    # -- prediction -----------------------------------------------------------------------------
    def _votes(self, X):
        """Yield ``(class index predicted by estimator t, its weight)`` for every estimator."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=["csr", "csc"], dtype=None, reset=False,
                          allow_nd=True)
        native = self.estimators_ and isinstance(self.estimators_[0], SammeEstimator)
        Xn = expand(as_tree_input(X), self._columns) if native else X
        for estimator, w in zip(self.estimators_, self.estimator_weights_):
            if isinstance(estimator, SammeEstimator):
                index = estimator.class_index(Xn)
            else:
                index = np.searchsorted(self.classes_, estimator.predict(Xn))
            yield index, w

    def _class_votes(self, X):
        """Yield estimator t's vote: ``(n, K)``, alpha_t for the class it predicts and
        -alpha_t/(K-1) for the others, computed as scikit-learn computes it."""
        K = self.n_classes_
        for index, w in self._votes(X):
            if K == 1:  # one class: no vote (scikit-learn's decision function is 0)
                yield np.zeros((index.shape[0], 1))
            else:
                yield np.where(index[:, None] == np.arange(K), w, -1 / (K - 1) * w)

    def decision_function(self, X):
        """scikit-learn's decision function: sum_t alpha_t v_t(x) / sum_t alpha_t, with v_t(x)
        = 1 for the class estimator t predicts and -1/(K-1) for the others; ``(n,)`` for two
        classes (the second column minus the first), ``(n, K)`` otherwise. Summed in
        scikit-learn's order, so that the numbers are its numbers to the last bit."""
        check_is_fitted(self)
        pred = sum(self._class_votes(X))
        pred /= self.estimator_weights_.sum()
        if self.n_classes_ == 2:
            pred[:, 0] *= -1
            return pred.sum(axis=1)
        return pred

    def staged_decision_function(self, X):
        """Yield the decision function after each estimator (scikit-learn's arithmetic)."""
        check_is_fitted(self)
        pred, norm = None, 0.0
        for vote, w in zip(self._class_votes(X), self.estimator_weights_):
            norm += w
            pred = vote if pred is None else pred + vote
            if self.n_classes_ == 2:
                two = pred.copy()
                two[:, 0] *= -1
                yield (two / norm).sum(axis=1)
            else:
                yield pred / norm

    @staticmethod
    def _proba(decision, n_classes):
        if n_classes == 2:
            decision = np.column_stack([-decision, decision]) / 2.0
        else:
            decision = decision / (n_classes - 1)
        decision = decision - decision.max(axis=1, keepdims=True)
        p = np.exp(decision)
        return p / p.sum(axis=1, keepdims=True)

    def predict(self, X):
        return self._labels(self.decision_function(X))

    def _labels(self, decision):
        if self.n_classes_ == 2:
            return self.classes_[(decision > 0).astype(np.intp)]
        return self.classes_[np.argmax(decision, axis=1)]

    def staged_predict(self, X):
        """Yield the predicted classes after each estimator."""
        for decision in self.staged_decision_function(X):
            yield self._labels(decision)

    def predict_proba(self, X):
        """softmax(decision / (K - 1)) (Zhu et al. 2009, eq. 15); for two classes
        softmax((-d, d) / 2), as scikit-learn computes them; all ones for one class."""
        check_is_fitted(self)
        if self.n_classes_ == 1:
            return np.ones((_num_samples(X), 1))
        return self._proba(self.decision_function(X), self.n_classes_)

    def staged_predict_proba(self, X):
        """Yield the class probabilities after each estimator."""
        for decision in self.staged_decision_function(X):
            yield self._proba(decision, self.n_classes_)

    def predict_log_proba(self, X):
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def staged_score(self, X, y, sample_weight=None):
        """Yield the accuracy after each estimator."""
        from sklearn.metrics import accuracy_score

        for labels in self.staged_predict(X):
            yield accuracy_score(y, labels, sample_weight=sample_weight)



class AdaBoostRegressor(_DropInAdaBoost, RegressorMixin, BaseEstimator):
    """scikit-learn's ``AdaBoostRegressor`` (AdaBoost.R2, Drucker 1997), beside the engine.

    AdaBoost.R2 predicts the weighted median of its estimators' predictions, not a sum of
    terms, and fits every estimator on a weighted bootstrap resample: it is not a recipe of
    margins and weights, so it runs its own loop beside the engine (docs/dropin.md says why).
    Every round draws, from one ``numpy.random.RandomState(random_state)``, the estimator's seeds
    and then the bootstrap rows exactly as scikit-learn does.

    With ``estimator=None`` (``DecisionTreeRegressor(max_depth=3)``) or a
    ``DecisionTreeRegressor`` of ``max_depth`` 1..8 with ``criterion="squared_error"`` and the
    other parameters at their defaults (``min_samples_leaf`` any), every round grows a native
    least-squares tree on the features binned once (the registered ``tree`` component's
    ``fit_regression_tree``), on the bootstrap counts, with scikit-learn's thresholds (midpoints
    of the node's values, features as float32). It picks scikit-learn's splits, and breaks
    exact ties between features by the random order in which scikit-learn's tree of the same
    round, seeded as scikit-learn seeds it, visits them (:mod:`boostkit.sklearn_order`); ties
    that scikit-learn's rounding decides may go the other way (docs/dropin.md).
    ``native_trees=False``, or any other
    regressor, fits the scikit-learn estimator itself each round: then the same
    ``random_state`` gives scikit-learn's model, estimator for estimator.

    Parameters, attributes and methods are scikit-learn's (``loss`` one of ``"linear"``,
    ``"square"``, ``"exponential"``); ``max_bins`` is the native trees' bins per feature.
    ``estimators_`` are :class:`R2Tree` objects (``predict``, ``feature_importances_``, the
    boostkit ``hypothesis``) on the native path, else the fitted scikit-learn estimators.
    """

    def __init__(self, estimator=None, *, n_estimators=50, learning_rate=1.0, loss="linear",
                 random_state=None, native_trees=True, max_bins=MAX_BINS):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.loss = loss
        self.random_state = random_state
        self.native_trees = native_trees
        self.max_bins = max_bins

    def _check_params(self):
        self._check_rounds_and_rate()
        if self.loss not in ("linear", "square", "exponential"):
            raise ValueError(
                f"loss must be 'linear', 'square' or 'exponential', got {self.loss!r}"
            )
        _check_base_estimator(self.estimator, "regressor")

    def _fit(self, X, y, sample_weight):
        from sklearn.base import clone
        from sklearn.tree import DecisionTreeRegressor

        self._check_params()
        X, y = validate_data(self, X, y, accept_sparse=["csr", "csc"], dtype=None,
                             y_numeric=True, allow_nd=True)
        y = column_or_1d(y).astype(np.float64)
        weights = _check_sample_weight(sample_weight, X, dtype=np.float64, copy=True,
                                       ensure_non_negative=True)
        if not (weights > 0).any():
            raise ValueError("sample_weight must not be all zero")
        # A distribution, also when the weights' sum overflows: they are proportions.
        weights = check_sample_weight(weights, weights.shape[0])
        self.estimator_ = (DecisionTreeRegressor(max_depth=3) if self.estimator is None
                           else clone(self.estimator))
        native = native_regression_tree(self.estimator_) if self.native_trees else None
        columns = None
        if native is not None and X.ndim != 2:
            raise ValueError(
                "X must be 2-D (n_samples, n_features) for the native regression trees, got an "
                f"array of {X.ndim} dimensions, shape {X.shape} (native_trees=False passes it to "
                "the estimator)"
            )
        if native is not None:
            from .data import bin_features
            from .kernels.sampling import bootstrap_counts
            from .plugins import get_registry

            # Found through the registry like every plugin: the `tree` component carries it.
            fit_regression_tree = get_registry().component("tree").fit_regression_tree

            X = as_tree_input(X)
            columns = exact_columns(X, weights > 0, self.max_bins)
            # Feature-major, like the bin codes: the unclipped values, whose midpoints are the
            # thresholds, and the clipped columns that are binned.
            values = np.ascontiguousarray(expand(X, columns).T)
            clipped = values if columns is None else np.ascontiguousarray(
                clip_columns(X, columns).T)
            # Binned through the column-major view: each column is read contiguously.
            binned = bin_features(clipped.T, self.max_bins, weights, np.random.default_rng(0))
            sources = (np.arange(X.shape[1]) if columns is None
                       else np.array([j for j, _, _ in columns]))  # each column's feature
        rng = check_random_state(self.random_state)
        n, T, nu = X.shape[0], int(self.n_estimators), float(self.learning_rate)
        estimators, alphas, errors = [], np.zeros(T), np.ones(T)
        tiny = np.finfo(np.float64).eps
        zero = weights == 0.0
        # The rows of positive weight (weights > 0 after the floor below): all of them, as a
        # slice, when no weight is zero, so that nothing is copied.
        kept = ~zero if zero.any() else slice(None)
        # The estimator's seeds, drawn every round in the order of its parameter names (on the
        # native path too: the bootstrap draws that follow them must be scikit-learn's).
        seed_keys = _seed_keys(self.estimator_)
        for t in range(T):
            # Tiny weights are floored (zero weights stay zero), as scikit-learn does.
            np.maximum(weights, tiny, out=weights)
            weights[zero] = 0.0
            seeds = {key: rng.randint(np.iinfo(np.int32).max) for key in seed_keys}
            # numpy.random.RandomState.choice(n, n, p=weights), from the same draws.
            cdf = weights.cumsum()
            cdf /= cdf[-1]
            draws = rng.random_sample(n)
            if native is None:
                estimator = clone(self.estimator_)
                if seeds:
                    estimator.set_params(**seeds)
                sample = cdf.searchsorted(draws, side="right")
                estimator.fit(_take_rows(X, sample), y[sample])
                prediction = estimator.predict(X)
            else:
                counts = np.empty(n)
                bootstrap_counts(cdf, draws, counts)
                # Exact ties between features go the way scikit-learn's tree of this round,
                # seeded with its random_state, sends them.
                tree = fit_regression_tree(
                    binned, y, counts, max_depth=native[0], min_samples_leaf=native[1],
                    values=values, node_priority=column_priority(seeds["random_state"], sources))
                estimator = R2Tree(tree, X.shape[1],
                                   term_importances(tree, X.shape[1], columns), columns,
                                   seeds.get("random_state"))
                prediction = tree.scores(values.T)  # Xe, column-major: read faster
            estimators.append(estimator)
            error = np.abs(prediction - y)
            loss = error[kept]
            largest = loss.max()
            if largest != 0:
                loss = loss / largest
            if self.loss == "square":
                loss = loss ** 2
            elif self.loss == "exponential":
                loss = 1.0 - np.exp(-loss)
            eps = float((weights[kept] * loss).sum())
            if eps <= 0:  # a perfect fit: weight 1, and stop
                alphas[t], errors[t] = 1.0, 0.0
                break
            if eps >= 0.5:  # no better than the median: drop it (unless it is all there is)
                if len(estimators) > 1:
                    estimators.pop()
                break
            beta = eps / (1.0 - eps)
            alphas[t], errors[t] = nu * np.log(1.0 / beta), eps
            if t == T - 1:
                break
            weights[kept] *= np.power(beta, (1.0 - loss) * nu)
            total = weights.sum()
            if not np.isfinite(total) or total <= 0:
                break
            weights /= total
        self.estimators_ = estimators
        self.estimator_weights_ = alphas
        self.estimator_errors_ = errors
        return self

    def _predictions(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=["csr", "csc"], dtype=None, reset=False,
                          allow_nd=True)
        if self.estimators_ and isinstance(self.estimators_[0], R2Tree):
            Xe = expand(as_tree_input(X), self.estimators_[0].columns)
            return np.column_stack([e.hypothesis.scores(Xe) for e in self.estimators_])
        return np.column_stack([e.predict(X) for e in self.estimators_])

    def _median(self, predictions, limit):
        """The weighted median of the first ``limit`` estimators' predictions: the smallest
        prediction whose cumulative weight reaches half the total (scikit-learn's rule)."""
        predictions = predictions[:, :limit]
        order = np.argsort(predictions, axis=1)
        cdf = np.cumsum(self.estimator_weights_[order], axis=1)
        at_median = (cdf >= 0.5 * cdf[:, -1:]).argmax(axis=1)
        rows = np.arange(predictions.shape[0])
        return predictions[rows, order[rows, at_median]]

    def predict(self, X):
        """The weighted median of the estimators' predictions."""
        return self._median(self._predictions(X), len(self.estimators_))

    def staged_predict(self, X):
        """Yield the prediction after each estimator."""
        predictions = self._predictions(X)
        for limit in range(1, len(self.estimators_) + 1):
            yield self._median(predictions, limit)

    def staged_score(self, X, y, sample_weight=None):
        """Yield the R^2 after each estimator."""
        from sklearn.metrics import r2_score

        for prediction in self.staged_predict(X):
            yield r2_score(y, prediction, sample_weight=sample_weight)



def _take_rows(X, rows):
    return X[rows]
