"""Facts about the world gpulint checks against, kept as data: accelerator resource names,
the GPU product labels nodes carry, and the tool configuration files that are not API objects.
"""
