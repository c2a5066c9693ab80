"""What every edition's d2l module shares: add_to_class, HyperParameters, the progress
board and the Trainer's device support, written over an edition's device helpers.

Written here rather than imported from the pip package ``d2l``: that package imports
the real frameworks (and matplotlib) at its top, which is what the shims replace."""
import inspect


def add_to_class(Class):
    """add_to_class(Class)

    A decorator that sets the function it decorates as a method of `Class` (the book
    adds methods to a class across several cells this way)."""
    def wrapper(obj):
        setattr(Class, obj.__name__, obj)
    return wrapper


class HyperParameters:
    """HyperParameters()

    ``self.save_hyperparameters()`` in an ``__init__`` stores its arguments as
    attributes (and in ``self.hparams``)."""

    def save_hyperparameters(self, ignore=()):
        """save_hyperparameters(ignore=())

        Store the calling ``__init__``'s arguments (all but `ignore`, ``self`` and
        names that start with ``_``) as attributes."""
        caller = inspect.currentframe().f_back
        skip = set(ignore) | {"self"}
        self.hparams = {k: v for k, v in inspect.getargvalues(caller).locals.items()
                        if k not in skip and not k.startswith("_")}
        for k, v in self.hparams.items():
            setattr(self, k, v)


class ProgressBoard(HyperParameters):
    """ProgressBoard(xlabel=None, ylabel=None, xlim=None, ylim=None, ...)

    The book's live plot, as far as the GPU chapter touches it: it holds its settings
    (``prepare_model`` sets ``board.xlim``); drawing is outside the chapter."""

    def __init__(self, xlabel=None, ylabel=None, xlim=None, ylim=None, xscale="linear",
                 yscale="linear", ls=("-", "--", "-.", ":"), colors=("C0", "C1", "C2", "C3"),
                 fig=None, axes=None, figsize=(3.5, 2.5), display=True):
        self.save_hyperparameters()

    def draw(self, x, y, label, every_n=1):
        raise NotImplementedError("ProgressBoard.draw: plotting is outside the GPU chapter "
                                  "(gpuarr.compat.d2l); record values in a gpuarr array "
                                  "and plot them with matplotlib")


def trainer_class(d2l):
    """The Trainer of the edition module `d2l` (which has gpu, num_gpus and to): the
    book's base Trainer with the GPU section's ``#@save`` methods in it."""

    class Trainer(HyperParameters):
        """Trainer(max_epochs, num_gpus=0, gradient_clip_val=0)

        d2l's Trainer as far as the GPU chapter takes it: ``gpus`` (at most the GPUs
        that exist), ``prepare_batch`` (a batch moved to the first of them) and
        ``prepare_model``; ``fit`` and the data are outside the chapter."""

        def __init__(self, max_epochs, num_gpus=0, gradient_clip_val=0):
            self.save_hyperparameters()
            self.gpus = [d2l.gpu(i) for i in range(min(num_gpus, d2l.num_gpus()))]

        def prepare_batch(self, batch):
            if self.gpus:
                batch = [d2l.to(a, self.gpus[0]) for a in batch]
            return batch

        def prepare_model(self, model):
            model.trainer = self
            model.board.xlim = [0, self.max_epochs]
            if self.gpus:
                d2l.move_model(model, self.gpus[0])
            self.model = model

        def fit(self, model, data):
            raise NotImplementedError("Trainer.fit: the training loop is outside the GPU "
                                      "chapter (gpuarr.compat.d2l); write the loop with "
                                      "prepare_batch, or use gpuarr.nn and gpuarr.optim")

    return Trainer


def devices(gpu, num_gpus, cpu):
    """try_gpu and try_all_gpus over an edition's cpu, gpu and num_gpus (the chapter's
    ``#@save`` definitions)."""

    def try_gpu(i=0):
        """try_gpu(i=0)

        gpu(i) if it exists, otherwise cpu()."""
        if num_gpus() >= i + 1:
            return gpu(i)
        return cpu()

    def try_all_gpus():
        """try_all_gpus()

        All available GPUs ([] without one)."""
        return [gpu(i) for i in range(num_gpus())]

    return try_gpu, try_all_gpus
