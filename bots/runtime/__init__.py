"""The job runtime: workers that claim stored check jobs and run them (later the scheduler)."""
