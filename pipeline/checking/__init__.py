"""The parts of a check that `pipeline.run` puts in order: what a check needs (deps), the
evidence-gathering and graph steps with their timings (stages), the model path's extraction and
judgement steps (steps), its refinement round (refinement) and the rules that have the last
word before the correction is written (finalise).
"""
