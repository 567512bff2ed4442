from . import reports as reports
from . import sweeps as sweeps
