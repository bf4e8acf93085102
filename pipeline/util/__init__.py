"""Small helpers every stage may use: the clock, the CPU pool, retries and Retry-After, text."""
