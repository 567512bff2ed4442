from .report import REPORT_FORMAT as REPORT_FORMAT
from .report import Report as Report
from .report import build_report as build_report
from .report import paired_table as paired_table
from .report import report_splits as report_splits
from .report import summary_table as summary_table
from .stats import PermutationTest as PermutationTest
from .stats import permutation_test as permutation_test
