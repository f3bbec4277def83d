"""Hints the mutation run of cli/hints.py and tuple_items found untested.

Each expected hint is what the rule in the hint's comment says, for a slip a
user makes: a bare field two sections own, an alias under a section the run
lacks, a word another flag of its section holds whole, an env option with
dashes, a preset followed by another word, a tuple flag's lone parenthesis.
"""

import pytest

from tests.cli.test_hints import TRAIN
from tests.helpers import cli_error_line


def test_a_bare_field_two_sections_own_is_not_pinned_on_the_first(capsys):
    # --checkpoint.every and --eval.every: `--every` is neither "the one
    # section's field"; the first section's flag is no likelier for it.
    line = cli_error_line([*TRAIN, "--every", "2"], capsys)
    assert "did you mean --checkpoint.every?" not in line, line


def test_an_alias_under_a_section_the_run_lacks_names_the_runs_field(capsys):
    # No section of this run has an lr alias under --optim (an optax user's
    # section): lr is still the run's own learning rate.
    line = cli_error_line([*TRAIN, "--optim.lr", "1e-3"], capsys)
    assert "did you mean --ppo.learning-rate?" in line, line


def test_a_word_another_flag_holds_whole_is_no_abbreviation(capsys):
    # `norm` is network's field (--network.norm), not the start of
    # --ppo.normalize-advantages.
    line = cli_error_line([*TRAIN, "--ppo.norm", "layer"], capsys)
    assert "norm is a field of network, not ppo's (e.g. --network.norm)" in line
    assert "normalize-advantages" not in line, line


def test_a_misspelt_flag_is_named_at_the_plain_cutoff(capsys):
    # "--dir" and "--run-dir" match at 2*5/(5+9) = 0.71: over the 0.6 cutoff
    # of any flag, under the 0.85 one of an --env.X (an environment's option).
    line = cli_error_line([*TRAIN, "--dir", "runs/x"], capsys)
    assert "did you mean --run-dir?" in line, line


def test_an_environment_option_with_dashes_is_named_with_underscores(capsys):
    line = cli_error_line([*TRAIN, "--env.frame-skip", "4"], capsys)
    option = "--env.option frame_skip=VALUE (env.options={'frame_skip': VALUE} in"
    assert f"an environment's own option? {option} Python)." in line


def test_a_preset_named_first_of_several_words_is_hinted(capsys):
    line = cli_error_line([*TRAIN, "cartpole", "ppo"], capsys)
    assert "did you mean --env cartpole?" in line, line


@pytest.mark.parametrize("words", [["(1,3"], ["1,", "3)"], ["(1", "3"]], ids=repr)
def test_a_lone_parenthesis_is_an_unmatched_bracket(words, capsys):
    line = cli_error_line(
        [*TRAIN, "--env", "cartpole_masked", "--env.hide-observations", *words], capsys
    )
    assert f"--env.hide-observations {' '.join(words)!r} has unmatched brackets" in line


def test_a_quoted_list_with_spaces_around_it_is_the_list():
    from purejaxdrl.cli.args import tuple_items

    assert tuple_items([" [1, 3] "]) == ["1", "3"]
    assert tuple_items([" (a,b)", ""]) == ["a", "b"]


def test_a_two_letter_word_is_too_short_to_name_a_flag_it_is_a_word_of(capsys):
    # `at` is a whole word of --eval.stop-at, but a two-letter word is part of
    # too many spellings to be taken as meaning the flag that holds it.
    line = cli_error_line([*TRAIN, "--at", "5"], capsys)
    assert "--eval.stop-at" not in line, line


def test_a_word_of_four_flags_names_none_of_them():
    from purejaxdrl.cli.hints import flag_hint

    # Up to three flags that hold the word whole are named; four are too many
    # to be a hint (one of them may still be the closest spelling).
    flags = ["--net.fast-gain", "--net.slow-gain", "--net.mid-gain", "--net.top-gain"]
    assert "one of" not in flag_hint("--net.gain", flags)
    three = flag_hint("--net.gain", flags[:3])
    assert three == (
        "did you mean one of --net.fast-gain, --net.mid-gain, --net.slow-gain? "
    )
