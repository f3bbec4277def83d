import math

import numpy as np

import purejaxdrl as pjd
from purejaxdrl.training.schedule import (
    budget_note,
    chunk_lengths,
    chunk_schedule,
    summarize_chunk,
)


def _config(num_updates: int, num_logs: int) -> pjd.TrainConfig:
    # 4 envs x 128 steps = 512 steps per update.
    return pjd.apply_overrides(
        pjd.TrainConfig(), {"total_steps": 512 * num_updates, "num_logs": num_logs}
    )


def test_a_budget_rounded_by_over_1_percent_says_so_and_others_do_not():
    assert budget_note(_config(78, 20)) is None  # whole updates
    # 40,000 steps train 39,936 (0.16% fewer): no note.
    config = pjd.apply_overrides(pjd.TrainConfig(), {"total_steps": 40_000})
    assert config.num_updates * config.steps_per_update == 39_936
    assert budget_note(config) is None
    # 5,000 train 4,608 (7.8% fewer): said, with the budget one update more.
    config = pjd.apply_overrides(pjd.TrainConfig(), {"total_steps": 5_000})
    assert budget_note(config) == (
        "total_steps 5,000 rounded to 4,608 (whole updates of num_envs x "
        "unroll_length = 4 x 128 = 512 steps; --total-steps 5,120 trains one "
        "update more)"
    )


def test_chunk_lengths_prefer_a_divisor_else_one_last_chunk_of_another_length():
    assert chunk_lengths(100, 20) == [5] * 20
    # 12 into ~5 chunks: target 2, divisor 2 -> six chunks of 2.
    assert chunk_lengths(12, 5) == [2] * 6
    # 97 is prime: target 9, no divisor within 2x -> 10 chunks of 9 and one of 7.
    assert chunk_lengths(97, 10) == [9] * 10 + [7]
    # A remainder under half a chunk joins the last chunk instead of being a
    # stub: 2441 (prime) into ~20 -> 19 chunks of 122 and one of 123.
    assert chunk_lengths(2441, 20) == [122] * 19 + [123]
    for n, logs in [(97, 10), (2441, 20), (1001, 7), (50, 50), (7, 3)]:
        lengths = chunk_lengths(n, logs)
        assert sum(lengths) == n and len(set(lengths)) <= 2, (n, logs)
    assert chunk_lengths(3, 20) == [1, 1, 1]
    # The divisor nearest the target (log scale), found by brute force.
    for n in range(1, 400):
        target = max(1, n // 7)
        best = min(range(1, n + 1), key=lambda d: (n % d, abs(math.log(d / target))))
        if 0.5 <= best / target <= 2.0 and n // best <= 2 * 7:
            assert chunk_lengths(n, 7) == [best] * (n // best), n
    # A budget of 2**30 updates is split at once (divisors in pairs).
    assert chunk_lengths(2**30, 100) == [2**23] * 128


def test_num_logs_gives_half_to_twice_as_many_chunks():
    # `--num-logs N` promises N/2 to 2N chunks; a floored target of 2 or 3
    # updates per chunk gave up to ~3N (59 updates at 20 logs: 59 chunks).
    assert len(chunk_lengths(59, 20)) == 30  # 29 of 2 and one of 1
    for num_logs in (4, 10, 20):
        for num_updates in range(2 * num_logs, 3000):
            lengths = chunk_lengths(num_updates, num_logs)
            assert sum(lengths) == num_updates
            assert num_logs / 2 <= len(lengths) <= 2 * num_logs, (
                num_updates,
                num_logs,
            )


def test_a_resume_at_a_chunk_boundary_continues_the_same_schedule():
    config = _config(100, 20)
    assert chunk_schedule(config, 0) == [(i, 5) for i in range(20)]
    assert chunk_schedule(config, 35) == [(i, 5) for i in range(7, 20)]
    assert chunk_schedule(config, 100) == []


def test_a_resume_off_the_boundaries_splits_the_rest_afresh():
    config = _config(100, 20)
    # 37 done: 63 left in round(20 * 63 / 100) = 13 logs, target 63 // 13 = 4;
    # the divisor of 63 nearest 4 (in ratio) is 3 -> 21 chunks of 3, numbered
    # from 8 (the index of 40, the first chunk boundary after 37).
    assert chunk_schedule(config, 37) == [(8 + i, 3) for i in range(21)]
    # The rest gets its share of the logs, not all of them: 87 done leaves 13
    # in round(20 * 13 / 100) = 3 logs, target 13 // 3 = 4; 13's divisors (1,
    # 13) are over 2x off it -> 3 chunks of 4, the remainder 1 (under half a
    # chunk) joining the last; numbered from 18 (the index of 90). All 20 logs
    # for the rest would give 13 chunks of 1.
    assert chunk_schedule(config, 87) == [(18, 4), (19, 4), (20, 5)]
    assert chunk_schedule(_config(100, 20), 120) == []


def test_summarize_chunk_means_metrics_and_episode_sums():
    metrics = {
        "loss/total": np.array([1.0, 3.0]),
        "episode/count": np.array([2.0, 0.0]),
        "episode/return_sum": np.array([30.0, 0.0]),
        "episode/length_sum": np.array([40.0, 0.0]),
    }
    out = summarize_chunk(metrics)
    # Episode means weigh by the episodes ended, not by updates: 30 / 2.
    assert out == {
        "loss/total": 2.0,
        "episode/count": 2.0,
        "episode/mean_return": 15.0,
        "episode/mean_length": 20.0,
    }


def test_summarize_chunk_reports_counters_where_they_ended():
    metrics = {
        "learner/grad_steps": np.array([0.0, 4.0, 8.0]),
        "replay/size": np.array([64.0, 128.0, 192.0]),
        "epsilon": np.array([1.0, 0.5, 0.0]),
    }
    out = summarize_chunk(metrics)
    assert out == {"learner/grad_steps": 8.0, "replay/size": 192.0, "epsilon": 0.5}


def test_summarize_chunk_means_a_replay_learners_losses_over_updates_that_learned():
    # Learning starts at the third of four updates: the losses before it read
    # 0 and are not losses, so the chunk's is (2 + 4) / 2, not 6 / 4.
    metrics = {
        "learner/grad_steps": np.array([0.0, 0.0, 4.0, 8.0]),
        "loss/total": np.array([0.0, 0.0, 2.0, 4.0]),
        "td/abs_mean": np.array([0.0, 0.0, 1.0, 2.0]),
        "entropy": np.array([0.0, 0.0, 3.0, 3.0]),
        "epsilon": np.array([1.0, 0.8, 0.6, 0.4]),  # in force, learning or not
    }
    out = summarize_chunk(metrics)
    assert out == {
        "learner/grad_steps": 8.0,
        "loss/total": 3.0,
        "td/abs_mean": 1.5,
        "entropy": 3.0,
        "epsilon": 0.7,
    }
    # A chunk with no learning update has no losses to report.
    early = {k: v[:2] for k, v in metrics.items()}
    assert summarize_chunk(early) == {"learner/grad_steps": 0.0, "epsilon": 0.9}
    # On-policy learners (no grad-step counter) mean every update.
    assert summarize_chunk({"loss/total": np.array([0.0, 2.0])}) == {"loss/total": 1.0}


def test_summarize_chunk_reports_the_largest_lag_of_its_updates():
    # One update 10 versions behind among three of 1: the chunk's maximum is
    # 10 (a mean of the maxima would say 3.25); the mean lag stays a mean.
    metrics = {
        "lag/max": np.array([1.0, 10.0, 1.0, 1.0]),
        "lag/mean": np.array([1.0, 4.0, 1.0, 1.0]),
    }
    assert summarize_chunk(metrics) == {"lag/max": 10.0, "lag/mean": 1.75}


def test_summarize_chunk_with_no_episode_ended_reports_nan_not_zero():
    metrics = {
        "episode/count": np.zeros(3),
        "episode/return_sum": np.zeros(3),
        "episode/length_sum": np.zeros(3),
    }
    out = summarize_chunk(metrics)
    assert out["episode/count"] == 0.0 and math.isnan(out["episode/mean_return"])


def test_summarize_chunk_names_an_environments_metrics_by_their_episode_means():
    metrics = {
        "episode/count": np.array([1.0, 3.0]),
        "episode/return_sum": np.array([2.0, 6.0]),
        "episode/length_sum": np.array([4.0, 12.0]),
        "episode/env/reward/upright_sum": np.array([0.5, 1.5]),
    }
    out = summarize_chunk(metrics)
    assert out["env/reward/upright"] == 0.5  # (0.5 + 1.5) / 4 episodes
    assert out["episode/mean_return"] == 2.0
    none_ended = {k: np.zeros(2) for k in metrics}
    assert math.isnan(summarize_chunk(none_ended)["env/reward/upright"])
