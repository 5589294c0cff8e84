"""Training with its in-training eval: ``agentgym train`` runs here.

``agentcli.train`` imports no env, rollout or evaluation code (data flows envs → rollout →
train → evaluate); the eval a run asks for (``TrainConfig.eval``) is built here and handed to
it: ``checkpoint_evaluator`` rolls a saved checkpoint out on the eval items through the same
engine as ``agentgym eval``. ``train`` checks first that the eval's environment can run, so a
missing server or simulator is one line before training, not after its first epoch.

With several processes, accelerate runs this module on each rank
(``python -m agentcli.train_eval CONFIG``): the training worker, given this evaluator.
"""

from __future__ import annotations

from pathlib import Path

from agentcli.errors import UsageError
from agentcli.train import launch, worker
from agentcli.train.config import TrainConfig
from agentcli.train.protocols import CheckpointEvaluator, EpisodePlayer
from agentcli.train.run import TrainSummary

WORKER = "agentcli.train_eval"


def checkpoint_evaluator(config: TrainConfig) -> CheckpointEvaluator | None:
    """The eval ``config`` asks for, as a function of a saved model; None: it asks for none."""
    if not config.eval.enabled:
        return None
    settings = config.eval
    env, items = config.env, settings.items
    assert env is not None and items is not None  # TrainConfig checks it

    def evaluate_checkpoint(model_dir: Path, name: str) -> tuple[float, float]:
        """Roll ``model_dir`` out on the eval items into ``out/eval/<name>``; (success, score)."""
        from agentcli.evaluate import ALL, evaluate
        from agentcli.policy import PolicyConfig
        from agentcli.rollout import RolloutConfig

        rollout = RolloutConfig(
            env=env,
            data=items,
            env_server=settings.env_server,
            concurrency=settings.batch_size,
            max_rounds=settings.max_rounds,
            view=settings.view,
            out=config.out / "eval" / name,
            overwrite=True,  # a checkpoint evaluated again (a resumed run) is evaluated afresh
            policy=PolicyConfig(kind="local", model=model_dir, batch_size=settings.batch_size),
        )
        overall = next(row for row in evaluate(rollout) if row.category == ALL)
        return overall.success_rate, overall.mean_score

    return evaluate_checkpoint


def check_eval_can_run(config: TrainConfig) -> None:
    """The eval's environment exists and runs here (or a server is given) and its items file
    is there; one line otherwise."""
    if not config.eval.enabled:
        return
    from agentcli.envs.registry import RUN_A_SERVER, get_spec, require_simulator

    assert config.env is not None and config.eval.items is not None  # TrainConfig checks it
    spec = get_spec(config.env)  # an unknown name is one line with the closest known one
    if not config.eval.items.is_file():
        raise UsageError(f"--eval-items {config.eval.items}: no such file; check the path")
    if config.eval.env_server:
        return
    require_simulator(spec, otherwise=f"{RUN_A_SERVER} for the eval")


def episode_player(config: TrainConfig) -> EpisodePlayer | None:
    """grpo's episode player (its servers start when it first plays); None for the others."""
    if config.method != "grpo":
        return None
    from agentcli.rl.episodes import EnvEpisodes

    grpo = config.grpo
    return EnvEpisodes(
        grpo.envs,
        items=grpo.items,
        env_server=grpo.env_server,
        view=grpo.view,
        max_turns=grpo.max_turns,
        max_new_tokens=grpo.max_new_tokens,
        temperature=grpo.temperature,
        seed=config.hyperparameters.seed,
    )


def check_envs_can_run(config: TrainConfig) -> None:
    """grpo's environments exist and run here (or a server is given); one line otherwise."""
    if config.method != "grpo" or config.grpo.env_server:
        return
    from agentcli.envs.registry import RUN_A_SERVER, get_spec, require_simulator

    for env in config.grpo.envs:
        require_simulator(get_spec(env), otherwise=RUN_A_SERVER)


def train(config: TrainConfig) -> TrainSummary:
    """Train as ``config`` says, evaluating along the way if it asks to (grpo: playing its
    envs)."""
    check_eval_can_run(config)
    check_envs_can_run(config)
    return launch.train(
        config,
        evaluate=checkpoint_evaluator(config),
        play=None if config.distributed else episode_player(config),
        worker=WORKER,
    )


if __name__ == "__main__":
    worker.main(checkpoint_evaluator, episode_player)
