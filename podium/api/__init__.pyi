from .config import RunConfig as RunConfig
from .config import load_config as load_config
from .runs import RunResult as RunResult
from .runs import RunStart as RunStart
from .runs import load_registry as load_registry
from .runs import resume as resume
from .runs import run as run
