"""Wrong: loaded without device=, so the parameters land on the CPU."""
import gpuarr as ga


def save_params(params, path):
    ga.save(path, params)


def load_params(path, device):
    return ga.load(path)
