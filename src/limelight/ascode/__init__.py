"""Observability as code: a folder of YAML files that declares an environment's queries,
alerts and boards, read and checked whole before anything is changed.

``documents`` reads YAML with the line of every value, ``problems`` names a
file, line and field for each error, ``limelight_files`` and ``baselime`` read
the two formats into the same ``Resource``s, ``folder`` checks a folder whole,
``canonical`` puts a declared and a stored resource in one comparable form,
``planning`` diffs a folder against what a server holds, and ``pulling``
writes what a server holds as files. Nothing here speaks HTTP: the command
line does (``cli/resources.py``).
"""
