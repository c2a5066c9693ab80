"""Reference solution of exercise 2."""
import gpuarr as ga


def save_and_load(params, path, device):
    ga.save(path, params)
    return ga.load(path, device=device)
