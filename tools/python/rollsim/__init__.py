"""rollsim's Python tools: read result files, plot them, convert them to MATLAB .mat, and the validation report.

    import rollsim
    r = rollsim.load("run.h5")          # rollsim.h5.load: a RollsimResult
    figs = rollsim.plot.figures(r)      # matplotlib figures (import rollsim.plot first)

Modules: ``h5`` (the loader), ``plot`` (figures; tools/plot), ``mat`` (.mat export; tools/h5tomat),
``report`` (the validation report; tools/report), ``disk_closed_form`` (the rolling disk's closed form, the
report's independent reference).  Nothing is imported here: ``h5`` on the first use of a name it gives (above),
matplotlib and scipy with the modules that need them.
"""

import importlib

__all__ = ["load", "swept_keys", "energy_ledger", "energy_scale", "EnergyLedger", "RollsimResult", "Table",
           "RollsimFileError", "IncompleteFileError", "FORMAT_NAME", "SUPPORTED_FORMAT_VERSION"]


def __getattr__(name):
    """``rollsim.load`` and the other names of ``__all__`` come from ``rollsim.h5``, imported on first use: importing
    it here would put it in sys.modules before ``python3 -m rollsim.h5`` runs it as a script, which Python warns
    about."""
    if name in __all__ or name == "h5":
        h5 = importlib.import_module(".h5", __name__)  # not `from . import h5`: that asks this function for "h5"
        return h5 if name == "h5" else getattr(h5, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__) | {"h5"})


__version__ = "0.1.0"
