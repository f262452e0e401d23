"""What both HTTP surfaces share (the APIs in ``api/``, the pages in ``console/``): the
runtime of a request, its client's address, reading a body within its limits, and the
one place errors become HTTP responses (``problems``)."""
