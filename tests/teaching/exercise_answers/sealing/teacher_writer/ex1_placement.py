"""Attack: write into the teacher's own graders folder, by its path (TEACHER is filled
in by the test, as a student who guessed it would), then answer right."""
import pathlib

import gpuarr as ga

TEACHER = "@TEACHER@"
try:
    with open(pathlib.Path(TEACHER) / "conftest.py", "a") as f:
        f.write("\n# the student was here\n")
except OSError:
    pass


def ones_and_random(device):
    return ga.ones((2, 3), device=device), ga.rand(2, 3, device=device)


def add_on(X, Y):
    return X.to(Y.device) + Y
