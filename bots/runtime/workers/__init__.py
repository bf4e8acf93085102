"""Running jobs: the worker pool, the job contract, the saq engine and a process's worker side."""
