"""Team memory (DESIGN.md §8): joining a shared memory, syncing with it, checking what is pushed.

Everything here drives the ``git`` command line (fetch, merge, push, the objects a
``pre-receive`` hook is shown), which is what a teammate's own Git commands see, and
which honours a server's quarantine of incoming objects.
"""
