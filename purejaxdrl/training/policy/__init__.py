"""An exported policy: the folder a run is exported to, loaded and played.

One concept a module, from the file format up:
`folder` (where a policy is: its two files, refusing to write over one, which
folder holds one), `record` (what it is made of: policy.json's record and the
parameters' bytes), `sampling` (how it samples, as its algorithm's record
says), `spaces` (its observation and action spaces, read off policy.json),
`checks` (a folder checked against itself before it acts), `inputs` (the
observations it takes, checked and put as its agent saw them), `exported`
(`Policy`: `export_policy` and `write_policy` write one, `load_policy` reads
it back), `acting` (how it acts when played: its mode or a sample) and
`evaluate` (`evaluate_policy` and `purejaxdrl eval POLICY_DIR`: playing it on
its environment made again). Imports `restored` of `training` for a run's
checkpoint, `observe` for its players; `training.train` and the sweeps write
one through `write_policy`.
"""

from purejaxdrl.training.policy.evaluate import (
    evaluate_policy as evaluate_policy,
)
from purejaxdrl.training.policy.evaluate import (
    is_policy_folder as is_policy_folder,
)
from purejaxdrl.training.policy.exported import Policy as Policy
from purejaxdrl.training.policy.exported import export_policy as export_policy
from purejaxdrl.training.policy.exported import load_policy as load_policy
from purejaxdrl.training.policy.exported import write_policy as write_policy
from purejaxdrl.training.policy.folder import (
    check_policy_folder as check_policy_folder,
)
