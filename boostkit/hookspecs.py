"""Hook specifications: every way a plugin can take part in boostkit.

There are two levels of hooks.

**Discovery hooks** are called once per process on the plugins found in the ``boostkit``
entry-point group. Through them a plugin contributes named *components* (typed classes) and named
*algorithms* (recipes: which component plays which role, with which parameters).

**Round hooks** are called on the component *instances* of one fit. Each ``fit`` builds its own
plugin manager holding exactly one implementation of every first-result role (proposal,
calibration, reweighting) plus the wrappers, stopping rules and observers the recipe names, so the
recipe, never the registration order, decides the algorithm. Before the first round, when ``fit``
gets no ``eval_set``, ``boostkit_validation_fraction()`` may ask for held-out rows. The engine
calls, every round ``t``::

    candidate = boostkit_propose(state)                 # weak hypothesis h_t, or None
    contribution = boostkit_calibrate(state, candidate) # c_t(x) from h_t(x) (and F_{t-1}(x))
    F_t = F_{t-1} + c_t                                 # done by the engine (and on validation)
    weights = boostkit_reweight(state)                  # D_{t+1} from the margins F_t
    boostkit_validation_score(state)                    # if there is validation data
    boostkit_should_stop(state, record)                 # any reason ends the run
    boostkit_round_end(state, record)                   # observers

and after the last round ``boostkit_best_round(state)`` names the round the model predicts with.
Before ``boostkit_fit_start``, ``boostkit_initial_weights(data)`` may replace the engine's D_1.

**Several classes.** With three or more classes, or a multi-label indicator matrix, boosting
runs over (example, class) pairs (Schapire & Singer 1999, sections 7-9): ``state.data.y`` is the
``(n, C)`` sign matrix Y(i, l), ``state.weights`` a distribution D(i, l) over the ``(n, C)``
pairs, ``state.margin`` the ``(n, C)`` margins F(x_i, l), and calibrations return ``(n, C)``
training values. Two classes keep one margin column and today's 1-D arrays (C = 1), so a
component written for binary data sees nothing new. ``state.data.n_columns`` is C. A component
that handles C > 1 provides the ``"multiclass"`` capability; a recipe with a component that does
not is refused on such data, or run as one-vs-rest (``Booster(multiclass="one-vs-rest")``).

**Where the rows live.** The engine runs this one round whatever holds the examples, through
the fit's *data plane* (:mod:`boostkit.plane`): in this process (``Booster.fit``), or split into
shards on other machines (:mod:`boostkit.distributed`, :mod:`boostkit.dask`), where every hook
but one runs on the driver, whose ``state`` has no rows (``state.weights`` and ``state.margin``
are ``None``, ``state.data`` a :class:`boostkit.distributed.ShardedData`). A component written
to the planes' contract works on every plane:

- the proposal chooses from ``state.class_histogram()`` (the class histogram of D_t over all
  rows, reduced over the shards) and returns a candidate with ``bin_cells`` (the cell of every
  bin of the feature it reads) and the cell sums; the plane gives it its rows' cells where
  there are rows;
- the calibration reads the cell sums (``state.cell_weights(candidate)``); a distributed
  candidate has no rows (``candidate.has_rows`` is False) and the calibration returns
  ``Calibrated(contribution, None, ...)`` with a contribution that has per-cell values;
- the reweighting has a row form, ``boostkit_row_weights``: the one hook that runs where the
  rows are, on each shard's rows (or on all of them in this process, when the component has no
  whole-rows ``boostkit_reweight``).

Such components provide the ``"distributed"`` capability; a recipe with one that does not is
refused for a distributed fit, before any work.

**Deprecated, for one release:** ``boostkit_propose_from_histogram(state, histogram)`` (now
``boostkit_propose`` reading ``state.class_histogram()``) and ``boostkit_shard_weights`` (now
``boostkit_row_weights``). A plugin that still implements them works, with a
``DeprecationWarning`` when it is registered.

A pluggy call costs microseconds: hooks run once per round, never per example.
"""

from __future__ import annotations

import inspect

import pluggy

PROJECT = "boostkit"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

#: The attribute-name prefix of every hook.
HOOK_PREFIX = "boostkit_"


class DiscoverySpecs:
    """Hooks called once per process on the plugins of the ``boostkit`` entry-point group."""

    @hookspec
    def boostkit_register_components(self, registry):
        """Register the component classes this plugin provides.

        Call ``registry.add_component(cls)`` for each class. A component is a subclass of one of
        the role bases in :mod:`boostkit.components` (``Proposal``, ``Calibration``,
        ``Reweighting``, ``Stopping``, ``Observer``, the two wrapper roles, or the value types
        ``WeakHypothesis`` and ``Contribution`` that fitted models are made of) with a unique
        ``name``. A duplicate or invalid name is refused with an error naming both distributions.

        Example::

            @boostkit.hookimpl
            def boostkit_register_components(registry):
                registry.add_component(MyLearner)
                registry.add_component(MyHypothesis)
        """

    @hookspec
    def boostkit_register_algorithms(self, registry):
        """Register named algorithms (:class:`boostkit.Recipe` values).

        Called after every plugin has registered its components, so a recipe may use components
        from any plugin. Each recipe is checked (its components exist and play the right roles)
        when it is added.

        Example::

            @boostkit.hookimpl
            def boostkit_register_algorithms(registry):
                registry.add_algorithm(boostkit.Recipe(
                    name="my-boost", proposal="my-learner", calibration="constant-alpha",
                    reweighting="exponential", stopping=("no-edge",), paper="Me (2026)"))
        """


class RoundSpecs:
    """Hooks called on the component instances of one fit (see the module docstring)."""

    @hookspec(firstresult=True)
    def boostkit_initial_weights(self, data):
        """Return the initial distribution D_1 of this fit's weights, or ``None`` for the default.

        ``data`` is the fit's :class:`boostkit.data.TrainingData`. The default is
        ``data.initial_weights``: the sample weights (normalised) for one margin column, and
        D_1(i) / C over the (example, class) pairs for C > 1 (Schapire & Singer's uniform start).
        A rule whose weights live on part of the pairs answers here, e.g. SAMME's on the pairs
        (i, y_i) of the true labels only. Return a float64 array of ``data.y``'s shape,
        non-negative, summing to 1; the engine checks it. It is also the D_1 of the training error
        and of the potential (``state.initial_weights``). The first answer (in recipe order) wins.

        Example::

            @boostkit.hookimpl
            def boostkit_initial_weights(self, data):
                d1 = np.zeros(data.y.shape)
                d1[np.arange(data.n_samples), data.labels] = data.sample_weight
                return d1
        """

    @hookspec(firstresult=True)
    def boostkit_row_initial_weights(self, y, labels, sample_weight):
        """Return D_1 of some rows, where they live, or ``None`` for the engine's default.

        The row form of :meth:`boostkit_initial_weights`, for a start that gives each row's
        weight from that row alone (SAMME's, on its true-label pair): called once on every
        shard of a distributed fit, when the shard is built from its partition, on the
        component that implements it. ``y`` holds the rows' signs (``(n,)``, or ``(n, C)``
        over (example, class) pairs), ``labels`` their class indices (``None`` for a
        multi-label matrix) and ``sample_weight`` their sample weights normalised over *all*
        the fit's rows (``(n,)``). Return a float64 array of ``y``'s shape, finite and
        non-negative; over all the rows the answers must sum to 1 (the engine checks both).
        A component that implements it implements :meth:`boostkit_initial_weights` too, the
        same start on all the rows in this process.

        Example (SAMME's ``samme-weights``)::

            @boostkit.hookimpl
            def boostkit_row_initial_weights(self, y, labels, sample_weight):
                if y.ndim == 1:
                    return None
                d1 = np.zeros(y.shape)
                d1[np.arange(y.shape[0]), labels] = sample_weight
                return d1
        """

    @hookspec
    def boostkit_fit_start(self, state):
        """Called once before the first round; reset any per-fit state here.

        Every component of the fit receives it, so stopping rules and stateful proposals start
        from scratch on each fit and an estimator can be refitted or cloned. ``state`` is the
        :class:`boostkit.BoostState` of this fit, with ``state.weights`` already ``D_1``.
        """

    @hookspec(firstresult=True)
    def boostkit_propose(self, state):
        """Return the next weak hypothesis as a :class:`boostkit.Candidate`, or ``None``.

        ``None`` means the pool is exhausted and ends the run (stop reason ``"pool-exhausted"``).
        The candidate carries the hypothesis and its output on the training data (``cells`` and/or
        ``scores``) so that calibration does not evaluate it again, or, for a proposal that
        chooses from ``state.class_histogram()`` and so works on every data plane, ``bin_cells``
        (:class:`boostkit.BinCells`: the cell of every bin of the feature it reads) and the cell
        sums, from which the plane finds each row's cell. The fit trains on that output
        and the model predicts with ``hypothesis.cells(X)`` and ``scores(X)``, so on the training
        rows these must give the candidate's cells and scores bit for bit
        (:func:`boostkit.testing.check_component` checks it). Exactly one proposal component
        implements this hook in a fit; wrappers (``wrapper=True``) may inspect the candidate and
        propose another instead (for example a picky wrapper that skips weak candidates).

        A proposal that needs a split criterion asks the calibration through
        :meth:`boostkit_partition_loss` (``state.hook.boostkit_partition_loss(...)``).
        """

    @hookspec(firstresult=True, warn_on_impl=DeprecationWarning(
        "boostkit_propose_from_histogram is deprecated and will be removed in the next release: "
        "implement boostkit_propose and read state.class_histogram() (docs/hooks.md)"))
    def boostkit_propose_from_histogram(self, state, histogram):
        """Deprecated: ``boostkit_propose`` reading ``state.class_histogram()`` does this on every
        data plane. Kept for one release: a proposal that implements only this hook is called
        with ``histogram=state.class_histogram()`` and must return a candidate with
        ``bin_cells``."""

    @hookspec(firstresult=True)
    def boostkit_row_weights(self, margin, y, initial_weights, n_jobs):
        """Return the next distribution over some rows, unnormalised, as :class:`boostkit.RowWeights`.

        The row form of the reweighting, called where the rows live after the round's term was
        added to their margins: on each shard of a distributed fit, or on all the rows in this
        process when the reweighting has no whole-rows ``boostkit_reweight``. ``margin`` (F_t),
        ``y`` (+-1) and ``initial_weights`` (D_1, normalised over all rows) are float64 arrays,
        flattened over (example, class) pairs with C > 1. Return the unnormalised weights
        (``weights * exp(log_scale)``, so that they need not overflow) and the log of these
        rows' share of the potential; the engine normalises over all rows. A reweighting that
        implements it provides ``"distributed"``; with ``boostkit_reweight`` as well, the two
        must agree up to rounding.

        Example (the ``margin-loss`` reweighting, through the engine's margin-loss kernel)::

            @boostkit.hookimpl
            def boostkit_row_weights(self, margin, y, initial_weights, n_jobs):
                return boostkit.losses.shard_weights(get_loss(self.loss), margin, y,
                                                     initial_weights, n_jobs)
        """

    @hookspec(firstresult=True, warn_on_impl=DeprecationWarning(
        "boostkit_shard_weights is deprecated and will be removed in the next release: "
        "implement boostkit_row_weights, its new name (docs/hooks.md)"))
    def boostkit_shard_weights(self, margin, y, initial_weights, n_jobs):
        """Deprecated name of :meth:`boostkit_row_weights` (same arguments and answer), kept for
        one release; called only when the reweighting has no ``boostkit_row_weights``."""

    @hookspec(firstresult=True)
    def boostkit_partition_loss(self, wpos, wneg, n_columns):
        """Return the loss this calibration reaches on each candidate partition, or ``None``.

        ``wpos`` and ``wneg`` have shape ``(..., K)``: the weight of the positive and negative
        training examples in each of the K cells of every candidate partition (for stumps, the
        two sides of each threshold of each feature). Return an array of shape ``(...)`` where
        smaller is better, e.g. the weighted error of the majority labelling for discrete
        AdaBoost, or Z = 2 sum_j sqrt(W+_j W-_j) for Schapire-Singer's domain partition. This
        is how a weak learner's criterion follows the calibration it is combined with.

        ``n_columns`` is the fit's number of margin columns C. When C > 1 the sums are per
        class, of shape ``(..., K, C)``: ``wpos[..., j, l]`` is the weight of the pairs (i, l)
        with Y(i, l) = +1 in cell j (AdaBoost.MH's Z is then 2 sum_{j,l} sqrt(W+_jl W-_jl)).
        A binary-only calibration may leave the argument out of its signature.

        **The loss must add up over cells** when the calibration can be combined with
        hypotheses of more than two cells (it does not need ``"two-cells"``): the loss of a
        partition is the sum over its cells of the loss of each cell alone,
        ``loss(wpos, wneg) == sum_j loss(wpos[..., j:j+1], wneg[..., j:j+1])`` (the cell axis
        being ``-2`` when C > 1). Trees rely on it: the ``tree`` learner compares a node's loss
        (one cell) with the loss of its best split (two cells) and grows the tree one split at
        a time, which lowers the loss of the whole tree only if that is the sum over its leaves.
        The weighted error sum_j min(W+_j, W-_j), Z = 2 sum_j sqrt(W+_j W-_j) and the squared
        error of a per-cell fit add up; max_j or a ratio of sums do not.
        """

    @hookspec(firstresult=True)
    def boostkit_partition_criterion(self, n_columns):
        """Name the partition loss when it is one of :data:`boostkit.criteria.CRITERIA`, or ``None``.

        A calibration whose :meth:`boostkit_partition_loss` is exactly a criterion of
        :mod:`boostkit.criteria` (``"error"``, ``"z"``, ``"gini"``, ``"entropy"``) may say so
        here; :func:`boostkit.criteria.partition_loss` then hands learners that function itself
        rather than a call of the hook, and a search that knows the function can run a compiled
        form of it (:func:`boostkit.splits.best_split` finds the lowest weighted error of every
        threshold in one kernel call, bit for bit the same split). The loss named must be the
        one ``boostkit_partition_loss`` gives for ``n_columns`` (the fit's C; with C > 1 the
        criterion's :data:`boostkit.criteria.MULTICLASS_CRITERIA` form); one component answers
        both hooks, and a recipe where different components answer them is refused.

        Example (``constant-alpha``)::

            @boostkit.hookimpl
            def boostkit_partition_criterion(self, n_columns):
                return "error"
        """

    @hookspec(firstresult=True)
    def boostkit_calibrate(self, state, candidate):
        """Turn the candidate's training output into this round's contribution c_t.

        Return a :class:`boostkit.Calibrated`: the :class:`boostkit.Contribution` value to store
        in the model (constant alpha, per-cell values, PAV steps, ...), its values on the training
        examples (shape ``(n,)``, or ``(n, C)`` with several margin columns), and a
        ``coefficients`` summary for the round record. Exactly one calibration
        implements this hook in a fit; wrappers (``wrapper=True``) transform the result, e.g.
        truncation or an input-dependent regularizer that multiplies c_t(x) by a function of the
        running margin F_{t-1}(x) (``state.margin``).
        """

    @hookspec(firstresult=True)
    def boostkit_reweight(self, state):
        """Return the next distribution over training examples as :class:`boostkit.Weights`.

        Called after the engine has added this round's contribution to ``state.margin``, so
        weights are computed from the margins F_t (and ``state.data.y``,
        ``state.initial_weights``), never updated in place: back-fitting can then replace a
        round by removing its contribution. ``Weights.log_potential`` is the log of the surrogate
        loss sum_i D_1(i) L(y_i, F_t(x_i)) that bounds the training error, if the rule has one;
        the engine derives Z_t and the bound prod Z_t from it. With C > 1 margin columns the
        weights are ``(n, C)``, over (example, class) pairs, and the sums run over the pairs.

        The whole-rows form, called only where every row is in this process: a reweighting
        with a row form (``boostkit_row_weights``) needs it only to do the same work faster
        (``state.least_margin`` spares the exponential rule a pass).
        """

    @hookspec(firstresult=True)
    def boostkit_validation_fraction(self):
        """Return the fraction of the training examples to hold out for validation, or ``None``.

        Called once per fit, before the training data are used, and only when ``fit`` gets no
        ``eval_set``. The first answer (in recipe order) wins: the engine holds out that share of
        the examples, stratified by class and drawn by the fit's seeded generator, fits on the
        rest and keeps the held-out rows in ``state.validation``
        (:class:`boostkit.validation.ValidationData`, with their running margins). A number in
        (0, 1).
        """

    @hookspec
    def boostkit_validation_score(self, state):
        """Return ``{name: score}`` for the current validation margins, or ``None``.

        Called every round when the fit has validation data (``state.validation``: the
        ``eval_set`` or the held-out rows), after the reweighting, when
        ``state.validation.margin`` is F_t on the validation examples. The engine checks that
        every score is a number (not NaN) and records it as ``record.extra["validation_<name>"]``
        next to the weighted validation error (``"validation_error"``), so that stopping rules,
        observers and ``verbose`` read it from the round record.
        """

    @hookspec
    def boostkit_should_stop(self, state, record):
        """Return a reason (a short string) to end the run after this round, or ``None``.

        Every stopping component is called; the first reason returned ends the run and is kept
        in the model (``model.stop_reason``). ``record`` is the :class:`boostkit.RoundRecord` of
        the round just finished; the round itself is kept.
        """

    @hookspec
    def boostkit_round_end(self, state, record):
        """Observe a finished round (history, progress, logging, user callbacks).

        Return value is ignored. ``record.stop_reason`` is set on the last round.
        """

    @hookspec(firstresult=True)
    def boostkit_best_round(self, state):
        """Return the round t whose model ``predict`` should use, or ``None`` for the last one.

        Called once after the last round, before the model is built, so a stopping rule that
        kept the best round so far (validation-based early stopping) names it. The model keeps
        every round (``staged_*`` and ``records`` go over all of them) and predicts with its
        first t terms (``model.best_round``). An integer in 1..len(state.records); the first
        answer (in recipe order) wins.
        """

    @hookspec
    def boostkit_compiled_form(self, state):
        """Return this component's compiled form (:mod:`boostkit.compiled`), or ``None``.

        Called once per fit, after ``boostkit_fit_start``, on every component of the recipe
        that implements it, each for itself. When every component answers, with the value of
        its role (:class:`boostkit.compiled.CompiledProposal`,
        :class:`~boostkit.compiled.CompiledCalibration`,
        :class:`~boostkit.compiled.CompiledReweighting`,
        :class:`~boostkit.compiled.CompiledStopping`), and the fit has no observer, callback,
        ``verbose``, tracing or validation data, the engine runs the rounds in one compiled
        call (:mod:`boostkit.kernels.rounds`) instead of calling the round hooks: binary fits
        on ordered binned data, each round a cut of one feature into two cells. Otherwise the
        rounds run one by one, the hooks as always (``verbose`` and tracing print why, once).
        ``boostkit_fit_start``, ``boostkit_best_round`` and ``boostkit_fit_end`` are called on
        both paths.

        A compiled form must give the model the round hooks give, to rounding: the same terms,
        coefficients within 1e-10 relative (:func:`boostkit.testing.check_compiled_forms`
        checks it). Return ``None`` where it does not cover the fit (missing values,
        categorical columns, several margin columns, an option it has no compiled form of): the
        fit then takes the per-round path. Build its functions with
        :func:`boostkit.compiled.compile_form`, here rather than at import. A reweighting
        that is not multiplicative per cell gives its weights from the margins
        (``CompiledReweighting(from_margins=...)``, :data:`boostkit.compiled.MARGIN_WEIGHTS`),
        as ``margin-loss`` does with :func:`boostkit.losses.compiled_weights`.

        Example (``constant-alpha``)::

            def constant_alpha_values(wneg, wpos, cell_scores, params, values, coefficients):
                s = params[0]
                eps = ((wneg[0] if cell_scores[0] > 0 else wpos[0])
                       + (wneg[1] if cell_scores[1] > 0 else wpos[1]))
                alpha = 0.5 * math.log((1.0 - eps + s) / (eps + s))
                values[0], values[1] = alpha * cell_scores[0], alpha * cell_scores[1]
                coefficients[0] = alpha

            @boostkit.hookimpl
            def boostkit_compiled_form(self, state):
                return CompiledCalibration(
                    "error", compile_form(constant_alpha_values, CALIBRATION), 1,
                    lambda values, coefficients: boostkit.LinearContribution(coefficients[0]),
                    params=resolve_smoothing(self.smoothing, n_examples(state.data)))
        """

    @hookspec
    def boostkit_fit_end(self, state, model):
        """Called once with the finished :class:`boostkit.BoostModel`, after the last round."""


HOOK_NAMES = frozenset(
    name for group in (DiscoverySpecs, RoundSpecs) for name in vars(group)
    if name.startswith(HOOK_PREFIX)
)


def unmarked_hooks(obj) -> list[str]:
    """Functions of ``obj`` (a plugin module or object, or a component class) named like a hook
    (``boostkit_...``) but not marked with :data:`hookimpl`, which pluggy would silently ignore."""
    return sorted(
        name for name in dir(obj)
        if name.startswith(HOOK_PREFIX) and inspect.isroutine(getattr(obj, name, None))
        and not hasattr(getattr(obj, name), f"{PROJECT}_impl")
    )


def unmarked_hooks_message(what: str, names: list[str]) -> str:
    """Why ``what`` is refused for the unmarked hook-named functions ``names``, and the fix."""
    listed = ", ".join(f"{name}()" for name in names)
    misspelled = sorted(set(names) - HOOK_NAMES)
    return (
        f"{what} defines {listed} without the @boostkit.hookimpl marker, so boostkit would never "
        f"call {'it' if len(names) == 1 else 'them'}: decorate "
        f"{'it' if len(names) == 1 else 'each'} with @boostkit.hookimpl (or "
        "@boostkit.hookimpl(wrapper=True) for a wrapper)"
        + (f"; {', '.join(map(repr, misspelled))} "
           f"{'is not a hook' if len(misspelled) == 1 else 'are not hooks'}: rename or mark "
           f"as well (names starting with {HOOK_PREFIX!r} are for hooks; docs/hooks.md lists "
           "them)" if misspelled else "")
    )
