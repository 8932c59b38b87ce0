"""``incoherent build``: the config, the plan of stages, resume, and the stage processes that run them."""
