from collections.abc import Iterator

import pytest

from fleetsim.models import catalogue


@pytest.fixture(autouse=True)
def isolated_catalogue() -> Iterator[None]:
    """Tests may register models and search paths; put the catalogue back afterwards."""
    known = dict(catalogue.KNOWN_MODELS)
    paths = list(catalogue._search_paths)
    yield
    catalogue.KNOWN_MODELS.clear()
    catalogue.KNOWN_MODELS.update(known)
    catalogue._search_paths[:] = paths
