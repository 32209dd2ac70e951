"""The browser layout matrix: recorded table snapshots (``record``), drawn by the real client with no
live match (``harness``) and checked for overlaps, the viewport, tap targets and contrast
(``checks.js``; the test is ``tests/browser/test_layout_matrix.py``)."""
