from .html_file import export_html as export_html
from .run_data import RunView as RunView
from .run_data import open_run as open_run
from .run_data import run_is_live as run_is_live
from .server import make_server as make_server
from .server import serve as serve
from .sweep_data import SweepView as SweepView
