"""The suite's rule that a skipped case is a defect (``tests/_skips.py``), on
an inner pytest run (pytester)."""

from __future__ import annotations

import pytest


def test_a_skipped_test_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("import pytest\ndef test_x():\n    pytest.skip('no reason')\n")
    result = pytester.runpytest("-p", "_skips")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*a skipped case is a defect here*no reason*"])


def test_a_module_skipped_as_it_is_collected_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        "import pytest\npytest.importorskip('no_such_module_here')\n"
        "def test_x():\n    pass\n"
    )
    result = pytester.runpytest("-p", "_skips")
    result.assert_outcomes(errors=1)


def test_a_test_of_a_schema_feature_the_spec_lacks_is_skipped(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        "import pytest\n"
        "@pytest.mark.skipif(True, reason='spec/v2 (2.0.0) has no Foo')\n"
        "def test_x():\n    pass\n"
    )
    result = pytester.runpytest("-p", "_skips")
    result.assert_outcomes(skipped=1)
