"""The ``[sandbox]`` keys of the builtin sandboxes, and what a sandbox runs with.

:class:`SandboxParams` is the model of the keys ``auto``, ``bwrap``, ``local`` and ``container``
take (one model: they read the same keys), declared on their ``SandboxSpec``: the config
validates ``[sandbox]`` against it, and each default is written here once (the limits' in
:class:`~podium.sandbox.limits.LimitParams`). :class:`SandboxOptions` is those keys read (sizes
in bytes, ``"auto"`` resolved), which the sandboxes hold; its defaults are the model's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field, field_validator

from podium.sandbox.limits import LimitParams, ResourceLimits

# What tabular solutions import nearly always; scikit-learn's submodules load separately (and
# pull in SciPy), so they are listed. Imported in the pool, off the node's critical path.
DEFAULT_PREIMPORTS = (
    "numpy", "pandas", "sklearn", "sklearn.linear_model", "sklearn.model_selection",
    "sklearn.metrics", "sklearn.ensemble", "sklearn.preprocessing",
)  # fmt: skip


# The native thread pools a kernel's libraries start (OpenMP: scikit-learn's boosting; BLAS:
# NumPy's linear algebra), each sized by the host's cores unless told. Kernels run side by side
# (a run's workers, a sweep's runs) would each start one thread per core and spin against the
# others: under load one small fit took 30 times its single-thread CPU time.
THREAD_POOL_VARS = (
    "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_MAX_THREADS",
)  # fmt: skip

GPUS = re.compile(r"all|\s*\d+\s*(,\s*\d+\s*)*")  # sandbox.gpus: all, or device indices


class SandboxParams(LimitParams):
    """The ``[sandbox]`` keys of the builtin sandboxes (``name``, which picks the sandbox, is the
    config's). Values stay as written (``"4G"``, ``"auto"``), so a run's config.toml records
    them so; :meth:`options` reads them. A plugin sandbox declares a model of its own on its
    ``SandboxSpec``, or takes the table as a dict holding these keys."""

    python: str | None = Field(None, description="interpreter of the solutions' environment")
    warm_pool: bool = Field(True, description="pre-start one kernel per worker")
    fork: bool = Field(True, description="fork the pool's kernels from a kernel factory")
    preimports: list[str] = Field(
        default_factory=lambda: list(DEFAULT_PREIMPORTS),
        description="imported in pool kernels before a node gets them",
    )
    gpus: str | None = Field(None, description='"all" or device indices "0,1"')
    threads: int | None = Field(
        None,
        ge=1,
        description="threads of a kernel's native pools (OpenMP, BLAS) as it starts; none: "
        "the cores the run may use divided by its workers (a solution may still ask for more)",
    )
    assume_container: bool = Field(
        False,
        description="the container sandbox: start even where no container is detected "
        "(something you trust, a container or a VM, encloses Podium)",
    )
    interrupt_grace_s: float = Field(
        3.0, ge=0.1, description="seconds between interrupting a kernel and killing it"
    )
    user: str | int = Field(
        "auto",
        description='who kernels run as when Podium is root: "auto" (a uid of its own per '
        "kernel, so no per-uid limit is shared), an account name or a uid (one for every "
        "kernel, sharing its per-uid limits); never root",
    )

    @field_validator("gpus")
    @classmethod
    def _gpus(cls, value: str | None) -> str | None:
        if value and not GPUS.fullmatch(value):
            raise ValueError('not "all" or device indices such as "0,1"')
        return value

    @classmethod
    def of(cls, table: SandboxParams | Mapping[str, Any]) -> SandboxParams:
        """The params themselves, or a ``[sandbox]`` table as the config holds it
        (``cfg.sandbox.model_dump()``: its ``name`` is the sandbox, not a key of it), missing
        keys at their defaults. The builtin factories take either (they took the table)."""
        if isinstance(table, SandboxParams):
            return table
        return cls.model_validate({k: v for k, v in table.items() if k != "name"})

    def options(self) -> SandboxOptions:
        return SandboxOptions(limits=self.resource_limits(), **self._read())

    def _read(self) -> dict[str, Any]:
        """The keys a sandbox holds as they are, but the limits (:meth:`resource_limits`)."""
        return {
            "python": self.python or None,
            "warm_pool": self.warm_pool,
            "preimports": tuple(self.preimports),
            "gpus": self.gpus or None,
            "threads": self.threads,
            "interrupt_grace_s": self.interrupt_grace_s,
            "user": "auto" if self.user == "" else self.user,  # uid 0 stays 0: refused
            "fork": self.fork,
        }


_DEFAULT = SandboxParams()._read()


@dataclass(frozen=True)
class SandboxOptions:
    """What a builtin sandbox runs with: :class:`SandboxParams` read. The defaults are the
    model's, so ``SandboxOptions()`` is what a run whose config sets nothing gets."""

    python: str | None = _DEFAULT["python"]
    limits: ResourceLimits = field(default_factory=ResourceLimits)
    warm_pool: bool = _DEFAULT["warm_pool"]
    preimports: tuple[str, ...] = _DEFAULT["preimports"]
    gpus: str | None = _DEFAULT["gpus"]  # None, "all", or device indices "0,1"
    threads: int | None = _DEFAULT["threads"]  # None: the libraries' own (a thread per core)
    interrupt_grace_s: float = _DEFAULT["interrupt_grace_s"]
    user: str | int = _DEFAULT["user"]  # who the kernels are on the host (see identity.py)
    fork: bool = _DEFAULT["fork"]  # pooled kernels forked from a kernel factory (factory.py)

    @classmethod
    def from_config(cls, options: Mapping[str, Any]) -> SandboxOptions:
        """The options of a ``[sandbox]`` table (see :meth:`SandboxParams.of`)."""
        return SandboxParams.of(options).options()


def thread_env(threads: int | None) -> dict[str, str]:
    """The variables that size a kernel's native thread pools (none when ``threads`` is None)."""
    return {} if threads is None else {name: str(threads) for name in THREAD_POOL_VARS}


def limits_from_config(options: Mapping[str, Any]) -> ResourceLimits:
    """The limits of a ``[sandbox]`` table (see :meth:`SandboxParams.of`)."""
    return SandboxParams.of(options).resource_limits()
