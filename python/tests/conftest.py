import os
import shutil

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.environ.get("PLUME_MODELS_DIR", os.path.join(HERE, "..", "..", "models"))

# Every URDF of models/ with its intended root (tests/test_utils.hpp all_models()).
ALL_MODELS = [("pendulum.urdf", "fixed"), ("double_pendulum.urdf", "fixed"), ("rod.urdf", "planar"),
              ("ball.urdf", "free"), ("balls_row.urdf", "fixed"), ("arm7.urdf", "fixed"),
              ("quadruped.urdf", "free"), ("humanoid.urdf", "free")]


def model_path(name):
    return os.path.join(MODELS, name)


@pytest.fixture
def models_dir():
    return MODELS


@pytest.fixture
def cli():
    """The `plume` program (PLUME_CLI, or the build tree's), or skip."""
    path = os.environ.get("PLUME_CLI") or shutil.which("plume")
    if not path or not os.path.exists(path):
        pytest.skip("the plume program is not built")
    return path
