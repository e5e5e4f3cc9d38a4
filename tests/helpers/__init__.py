"""What tests share; reuse these instead of writing another copy.

* `cli`: the in-process CLI driver. `run_cases` / `run_mains` run any entry
  point's `main` as its command line does (flag ranges, one-line errors),
  many argvs in one process; `assert_one_error` checks the one-line promise.
* `processes`: `run`/`run_command` a program to its end; `start`, `finish`,
  `kill_when` / `kill_after_first_checkpoint` for kill -9 and resume tests.
* `checkpoints`: the original tiny checkpoints (`ckpt_a`, `ckpt_b`), their
  golden inputs and variable tables; `with_heads` adds a task model's heads
  (the conftest fixture `head_checkpoint` makes each once per session).
* `scripts`: arguments and data of tiny run_*.py runs and `start_run`.
* `tiny_task`: a tiny Task for the engine tests (and its subprocess entry).
* `parity`: API-vs-script checks (a script on a run folder, its
  eval_results.txt against the API's `evaluate`).
* `hf_models`, `squad_golden`, `golden_files`, `conll`, `filesystems`,
  `sentencepiece_model`: fixture data of one area each.

Tests that start programs or train end to end are marked `process`
(tests/conftest.py); `make test-fast` leaves them out.
"""
