"""The job runtime, one package per concern, each importing only those before it.

- `workers`: the worker pool, the job contract and the saq engine;
- `checking`: the one way in for check requests, check jobs, the reuse index, uploads;
- `platform`: the adapter contract, platform intake with its guards, privacy and wording;
- `review`: the human review queue and its cards;
- `delivery`: reply jobs, review-card jobs, the send-once ledger and acknowledgements;
- `monitor`: the proactive monitor.

`service` builds a process's worker side from all of them; `supervisor` starts and stops the
parts of every long-running command (serve, worker, relay, monitor) one way.
"""
