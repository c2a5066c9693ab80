"""Wrong: no file: the parameters are kept in a dict of the module, and copied to the
device on loading."""
_kept = {}


def save_params(params, path):
    _kept.update(params)


def load_params(path, device):
    return {name: p.copyto(device) for name, p in _kept.items()}
