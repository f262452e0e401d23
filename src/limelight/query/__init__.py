"""The query layer: definition and validation, compilation to SQL, result shaping.

Pure: it imports neither the stores nor the web framework nor the settings.
"""
