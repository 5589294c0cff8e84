"""``agentgym iterate``: the LEAP loop as stages over a run directory (see ``runner``).

Iteration 0, behavioural cloning (``[env]``: once per environment)::

    collect[env] → annotate[env] → extract-state[env] → build-data → train → eval[env]

Iteration k ≥ 1, the teacher corrects the student's own episodes::

    rollout[env] (model k-1, training items) → correct[env] → build-data → train (from
    model k-1) → eval[env]

and in iteration 1 with ``control: true`` the matched control, iteration 0 continued as
iteration 1 is but on the expert's own states::

    control-collect[env] (the expert on the items the student was rolled out on) →
    control-annotate[env] → control-build-data → control-train (from model 0) → control-eval[env]

then each of the iteration's ``variants``, another model from where the iteration starts,
trained on what it learns from by other settings (another method) and evaluated alike::

    <name>-build-data (a grpo variant: none) → <name>-train → <name>-eval[env]

Each environment's files live in its own part of the run (``RunLayout.env``); the training
set mixes all of them and one model learns from it. Each section of the config holds the
settings of the command that runs its stage (the same names, types, defaults and help) less
what iterate fills in (environment, paths, models); ``iterations`` overrides sections for
one iteration.

The package's modules, lowest first (where a run's files live is ``agentcli.run_layout``, a
leaf below data/ and teacher/, which use it too): ``runner`` (the stage graph and the
manifest), ``config`` (``IterateConfig``), ``stages`` (an iteration's stages), ``report``
(what a run achieved: its rows, paired comparisons and report files) and ``loop`` (resolve
and run iterations: what ``agentgym iterate`` calls, which writes the report). This file imports
none of them.
"""
