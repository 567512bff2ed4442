"""Tracebacks laid out exactly as the sandbox's IPython kernel reports them (podium's kernels
strip the colours): the rule and the exception's header, the cell frame with its context and
arrow, then the library frames, copied from real failures of pandas and scikit-learn, and the
exception's line; a chained one for a KeyError. Checked byte for byte against a kernel's
tracebacks for the same code.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.viewer.synthetic.programs import FEATURES, Code, Program
from tests.viewer.synthetic.task import LIB

RULE = "-" * 75
CAUSE = "\n\nThe above exception was the direct cause of the following exception:\n\n"


def traceback_text(name: str, message: str, cells: list[str], frames: list[str]) -> str:
    """One exception: the rule, its header, the cell frames, the library frames, its line."""
    return f"{RULE}\n{_exception(name, message, [*cells, *frames])}"


def _exception(name: str, message: str, frames: list[str]) -> str:
    body = "\n\n".join(frames)
    return f"{name:<42}Traceback (most recent call last)\n{body}\n\n{name}: {message}"


def cell_frame(code: Code, line: int, scope: tuple[int, int] | None = None, where: str = "") -> str:
    """The frame of the cell's own code: 4 lines of context before the failing one and 3
    after, within ``scope`` (a function's first and last lines; the whole cell by default)."""
    first, last = scope or (1, len(code.lines))
    rows = [f"Cell In[1], line {line}{where}"]
    for n in range(max(first, line - 4), min(last, line + 3) + 1):
        text = code.lines[n - 1]
        mark = f"{'-' * max(5 - len(str(n)), 1)}> {n}" if n == line else f"{n:>7}"
        rows.append(f"{mark} {text}")
    return "\n".join(rows)


def _raise_key_error(p: Program, code: Code, name: str, message: str) -> str:
    user = next(n for n in p.extras if FEATURES[n].needs == p.bug.key) if p.bug else ""
    scope = (code.marks["def_features"], code.marks["return_features"])
    inner = cell_frame(code, code.marks[f"feature:{user}"], scope, ", in add_features(df)")
    chained = _exception(name, message, KEY_ERROR_CHAIN)
    main = _exception(
        name, message, [cell_frame(code, code.marks["call_features"]), inner, *KEY_ERROR_FRAMES]
    )
    return f"{RULE}\n{chained}{CAUSE}{main}"


def _raise_at(mark: str, frames: list[str]) -> Callable[[Program, Code, str, str], str]:
    def raise_(p: Program, code: Code, name: str, message: str) -> str:
        return traceback_text(name, message, [cell_frame(code, code.marks[mark])], frames)

    return raise_


NAN_MESSAGE = (
    "Input X contains NaN.\nLogisticRegression does not accept missing values encoded as NaN "
    "natively. For supervised learning, you might want to consider "
    "sklearn.ensemble.HistGradientBoostingClassifier and Regressor which accept missing values "
    "encoded as NaNs natively. Alternatively, it is possible to preprocess the data, for "
    "instance by using an imputer transformer in a pipeline or drop samples with missing "
    "values. See https://scikit-learn.org/stable/modules/impute.html You can find a list of all "
    "estimators that handle NaN values at the following page: "
    "https://scikit-learn.org/stable/modules/impute.html#estimators-that-handle-nan-values"
)


def _frames(text: str) -> list[str]:
    """Library frames as the kernel printed them (copied from real failures, pandas 3.1 and
    scikit-learn 1.9 under ipykernel 7), separated by blank lines, their site-packages path
    written SITE/."""
    return text.replace("SITE/", f"{LIB}/").split("\n\n")


KEY_ERROR_CHAIN = _frames("""\
File SITE/pandas/core/indexes/base.py:3816, in Index.get_loc(self, key)
   3815 try:
-> 3816     return self._engine.get_loc(casted_key)
   3817 except KeyError as err:

File pandas/_libs/index.pyx:172, in pandas._libs.index.IndexEngine.get_loc()
--> 172 'Could not get source, probably due dynamically evaluated source code.'

File pandas/_libs/index.pyx:201, in pandas._libs.index.IndexEngine.get_loc()
--> 201 'Could not get source, probably due dynamically evaluated source code.'

File pandas/_libs/hashtable_class_helper.pxi:7726, in pandas._libs.hashtable.PyObjectHashTab\
le.get_item()
-> 7726 'Could not get source, probably due dynamically evaluated source code.'

File pandas/_libs/hashtable_class_helper.pxi:7734, in pandas._libs.hashtable.PyObjectHashTab\
le.get_item()
-> 7734 'Could not get source, probably due dynamically evaluated source code.\'""")

KEY_ERROR_FRAMES = _frames("""\
File SITE/pandas/core/frame.py:4330, in DataFrame.__getitem__(self, key)
   4326\x20
   4327         if is_single_key:
   4328             if self.columns.nlevels > 1:
   4329                 return self._getitem_multilevel(key)
-> 4330             indexer = self.columns.get_loc(key)
   4331             if is_integer(indexer):
   4332                 indexer = [indexer]  # type: ignore[assignment]
   4333         else:

File SITE/pandas/core/indexes/base.py:3823, in Index.get_loc(self, key)
   3818     if isinstance(casted_key, slice) or (
   3819         isinstance(casted_key, abc.Iterable)
   3820         and any(isinstance(x, slice) for x in casted_key)
   3821     ):
   3822         raise InvalidIndexError(key) from err
-> 3823     raise KeyError(key) from err
   3824 except TypeError:
   3825     # If we have a listlike key, _check_indexing_error will raise
   3826     #  InvalidIndexError. Otherwise we fall through and re-raise
   3827     #  the TypeError.
   3828     self._check_indexing_error(key)""")

STRINGS_FRAMES = _frames("""\
File SITE/sklearn/base.py:1403, in _fit_context.<locals>.decorator.<locals>.wrapper(estimato\
r, *args, **kwargs)
   1393     estimator._validate_params()
   1395 with (
   1396     config_context(
   1397         skip_parameter_validation=(
   (...)   1401     callback_management_context(estimator),
   1402 ):
-> 1403     return fit_method(estimator, *args, **kwargs)

File SITE/sklearn/ensemble/_forest.py:334, in BaseForest.fit(self, X, y, sample_weight)
    331 if issparse(y):
    332     raise ValueError("sparse multilabel-indicator for y is not supported.")
--> 334 X, y = validate_data(
    335     self,
    336     X,
    337     y,
    338     multi_output=True,
    339     accept_sparse="csc",
    340     dtype=np.float32,
    341     ensure_all_finite=False,
    342 )
    343 # _compute_missing_values_in_feature_mask checks if X has missing values and
    344 # will raise an error if the underlying tree base estimator can't handle missing
    345 # values. Only the criterion is required to determine if the tree supports
    346 # missing values.
    347 estimator = type(self.estimator)(criterion=self.criterion)

File SITE/sklearn/utils/validation.py:3058, in validate_data(_estimator, X, y, reset, valida\
te_separately, skip_check_array, **check_params)
   3056         y = check_array(y, input_name="y", **check_y_params)
   3057     else:
-> 3058         X, y = check_X_y(X, y, **check_params)
   3059     out = X, y
   3061 if not no_val_X and check_params.get("ensure_2d", True):

File SITE/sklearn/utils/validation.py:1330, in check_X_y(X, y, accept_sparse, accept_large_s\
parse, dtype, order, copy, force_writeable, ensure_all_finite, ensure_2d, allow_nd, multi_ou\
tput, ensure_min_samples, ensure_min_features, y_numeric, estimator)
   1325         estimator_name = _check_estimator_name(estimator)
   1326     raise ValueError(
   1327         f"{estimator_name} requires y to be passed, but the target y is None"
   1328     )
-> 1330 X = check_array(
   1331     X,
   1332     accept_sparse=accept_sparse,
   1333     accept_large_sparse=accept_large_sparse,
   1334     dtype=dtype,
   1335     order=order,
   1336     copy=copy,
   1337     force_writeable=force_writeable,
   1338     ensure_all_finite=ensure_all_finite,
   1339     ensure_2d=ensure_2d,
   1340     allow_nd=allow_nd,
   1341     ensure_min_samples=ensure_min_samples,
   1342     ensure_min_features=ensure_min_features,
   1343     estimator=estimator,
   1344     input_name="X",
   1345 )
   1347 y = _check_y(y, multi_output=multi_output, y_numeric=y_numeric, estimator=estimator)
   1349 check_consistent_length(X, y)

File SITE/sklearn/utils/validation.py:1038, in check_array(array, accept_sparse, accept_larg\
e_sparse, dtype, order, copy, force_writeable, ensure_all_finite, ensure_non_negative, ensur\
e_2d, allow_nd, ensure_min_samples, ensure_min_features, estimator, input_name)
   1036         array = xp.astype(array, dtype, copy=False)
   1037     else:
-> 1038         array = _asarray_with_order(array, order=order, dtype=dtype, xp=xp)
   1039 except ComplexWarning as complex_warning:
   1040     raise ValueError(
   1041         "Complex data not supported\\n{}\\n".format(array)
   1042     ) from complex_warning

File SITE/sklearn/utils/_array_api.py:983, in _asarray_with_order(array, dtype, order, copy,\
 xp, device)
    981     array = numpy.array(array, order=order, dtype=dtype)
    982 else:
--> 983     array = numpy.asarray(array, order=order, dtype=dtype)
    985 # At this point array is a NumPy ndarray. We convert it to an array
    986 # container that is consistent with the input's namespace.
    987 return xp.asarray(array)

File SITE/pandas/core/generic.py:1985, in NDFrame.__array__(self, dtype, copy)
   1981             )
   1982         values = self._values
   1983         if copy is None:
   1984             # Note: branch avoids `copy=None` for NumPy 1.x support
-> 1985             arr = np.asarray(values, dtype=dtype)
   1986         else:
   1987             arr = np.array(values, dtype=dtype, copy=copy)
   1988\x20""")

NAN_FRAMES = _frames("""\
File SITE/sklearn/base.py:1403, in _fit_context.<locals>.decorator.<locals>.wrapper(estimato\
r, *args, **kwargs)
   1393     estimator._validate_params()
   1395 with (
   1396     config_context(
   1397         skip_parameter_validation=(
   (...)   1401     callback_management_context(estimator),
   1402 ):
-> 1403     return fit_method(estimator, *args, **kwargs)

File SITE/sklearn/linear_model/_logistic.py:1437, in LogisticRegression.fit(self, X, y, samp\
le_weight)
   1434 if self.n_jobs is not None:
   1435     warnings.warn(msg, category=FutureWarning)
-> 1437 X, y = validate_data(
   1438     self,
   1439     X,
   1440     y,
   1441     accept_sparse="csr",
   1442     dtype=[xp.float64, xp.float32],
   1443     order="C",
   1444     accept_large_sparse=solver not in ["liblinear", "sag", "saga"],
   1445 )
   1446 n_features = X.shape[1]
   1447 check_classification_targets(y)

File SITE/sklearn/utils/validation.py:3058, in validate_data(_estimator, X, y, reset, valida\
te_separately, skip_check_array, **check_params)
   3056         y = check_array(y, input_name="y", **check_y_params)
   3057     else:
-> 3058         X, y = check_X_y(X, y, **check_params)
   3059     out = X, y
   3061 if not no_val_X and check_params.get("ensure_2d", True):

File SITE/sklearn/utils/validation.py:1330, in check_X_y(X, y, accept_sparse, accept_large_s\
parse, dtype, order, copy, force_writeable, ensure_all_finite, ensure_2d, allow_nd, multi_ou\
tput, ensure_min_samples, ensure_min_features, y_numeric, estimator)
   1325         estimator_name = _check_estimator_name(estimator)
   1326     raise ValueError(
   1327         f"{estimator_name} requires y to be passed, but the target y is None"
   1328     )
-> 1330 X = check_array(
   1331     X,
   1332     accept_sparse=accept_sparse,
   1333     accept_large_sparse=accept_large_sparse,
   1334     dtype=dtype,
   1335     order=order,
   1336     copy=copy,
   1337     force_writeable=force_writeable,
   1338     ensure_all_finite=ensure_all_finite,
   1339     ensure_2d=ensure_2d,
   1340     allow_nd=allow_nd,
   1341     ensure_min_samples=ensure_min_samples,
   1342     ensure_min_features=ensure_min_features,
   1343     estimator=estimator,
   1344     input_name="X",
   1345 )
   1347 y = _check_y(y, multi_output=multi_output, y_numeric=y_numeric, estimator=estimator)
   1349 check_consistent_length(X, y)

File SITE/sklearn/utils/validation.py:1090, in check_array(array, accept_sparse, accept_larg\
e_sparse, dtype, order, copy, force_writeable, ensure_all_finite, ensure_non_negative, ensur\
e_2d, allow_nd, ensure_min_samples, ensure_min_features, estimator, input_name)
   1084     raise ValueError(
   1085         f"Found array with dim {array.ndim},"
   1086         f" while dim <= 2 is required{context}."
   1087     )
   1089 if ensure_all_finite:
-> 1090     _assert_all_finite(
   1091         array,
   1092         input_name=input_name,
   1093         estimator_name=estimator_name,
   1094         allow_nan=ensure_all_finite == "allow-nan",
   1095     )
   1097 if copy:
   1098     if _is_numpy_namespace(xp):
   1099         # only make a copy if `array` and `array_orig` may share memory`

File SITE/sklearn/utils/validation.py:137, in _assert_all_finite(X, allow_nan, msg_dtype, es\
timator_name, input_name)
    134 if first_pass_isfinite:
    135     return
--> 137 _assert_all_finite_element_wise(
    138     X,
    139     xp=xp,
    140     allow_nan=allow_nan,
    141     msg_dtype=msg_dtype,
    142     estimator_name=estimator_name,
    143     input_name=input_name,
    144 )

File SITE/sklearn/utils/validation.py:186, in _assert_all_finite_element_wise(X, xp, allow_n\
an, msg_dtype, estimator_name, input_name)
    169 if estimator_name and input_name == "X" and has_nan_error:
    170     # Improve the error message on how to handle missing values in
    171     # scikit-learn.
    172     msg_err += (
    173         f"\\n{estimator_name} does not accept missing values"
    174         " encoded as NaN natively. For supervised learning, you might want"
   (...)    184         "#estimators-that-handle-nan-values"
    185     )
--> 186 raise ValueError(msg_err)""")

LENGTH_FRAMES = _frames('''\
File SITE/pandas/core/frame.py:4659, in DataFrame.__setitem__(self, key, value)
   4655             # Column to set is duplicated
   4656             self._setitem_array([key], value)
   4657         else:
   4658             # set column
-> 4659             self._set_item(key, value)

File SITE/pandas/core/frame.py:4895, in DataFrame._set_item(self, key, value)
   4891                 target="column on a DataFrame",
   4892                 hint="Use a full-length tuple key instead.",
   4893             )
   4894\x20
-> 4895         value, refs = self._sanitize_column(value)
   4896\x20
   4897         if (
   4898             key in self.columns

File SITE/pandas/core/frame.py:6406, in DataFrame._sanitize_column(self, value)
   6402                 value = Series(value)
   6403             return _reindex_for_setitem(value, self.index)
   6404\x20
   6405         if is_list_like(value):
-> 6406             com.require_length_match(value, self.index)
   6407         return sanitize_array(value, self.index, copy=True, allow_2d=True), None

File SITE/pandas/core/common.py:612, in require_length_match(data, index)
    608 """
    609 Check the length of data matches the length of the index.
    610 """
    611 if len(data) != len(index):
--> 612     raise ValueError(
    613         "Length of values "
    614         f"({len(data)}) "
    615         "does not match length of index "
    616         f"({len(index)})"
    617     )''')

HGB_INTERRUPT = _frames('''\
File SITE/sklearn/base.py:1403, in _fit_context.<locals>.decorator.<locals>.wrapper(estimato\
r, *args, **kwargs)
   1393     estimator._validate_params()
   1395 with (
   1396     config_context(
   1397         skip_parameter_validation=(
   (...)   1401     callback_management_context(estimator),
   1402 ):
-> 1403     return fit_method(estimator, *args, **kwargs)

File SITE/sklearn/ensemble/_hist_gradient_boosting/gradient_boosting.py:783, in BaseHistGrad\
ientBoosting.fit(self, X, y, sample_weight, X_val, y_val, sample_weight_val)
    781 if self.verbose >= 2:
    782     iteration_start_time = time()
--> 783     print(
    784         "[{}/{}] ".format(iteration + 1, self.max_iter), end="", flush=True
    785     )
    787 # Update gradients and hessians, inplace
    788 # Note that self._loss expects shape (n_samples,) for
    789 # n_trees_per_iteration = 1 else shape (n_samples, n_trees_per_iteration).
    790 if self._loss.constant_hessian:

File SITE/ipykernel/iostream.py:694, in OutStream.flush(self)
    683 """trigger actual zmq send
    684\x20
    685 send will happen in the background thread
    686 """
    687 if (
    688     self.pub_thread
    689     and self.pub_thread.thread is not None
   (...)    692 ):
    693     # request flush on the background thread
--> 694     self.pub_thread.schedule(self._flush)
    695     # wait for flush to actually get through, if we can.
    696     evt = threading.Event()

File SITE/ipykernel/iostream.py:343, in IOPubThread.schedule(self, f)
    341     self._events.append(f)
    342     # wake event thread (message content is ignored)
--> 343     self._event_pipe.send(b"")
    344 else:
    345     f()

File SITE/zmq/sugar/socket.py:713, in Socket.send(self, data, flags, copy, track, routing_id\
, group)
    706         data = zmq.Frame(
    707             data,
    708             track=track,
    709             copy=copy or None,
    710             copy_threshold=self.copy_threshold,
    711         )
    712     data.group = group
--> 713 return super().send(data, flags=flags, copy=copy, track=track)

File zmq/backend/cython/_zmq.py:1152, in zmq.backend.cython._zmq.Socket.send()
-> 1152 'Could not get source, probably due dynamically evaluated source code.'

File zmq/backend/cython/_zmq.py:1200, in zmq.backend.cython._zmq.Socket.send()
-> 1200 'Could not get source, probably due dynamically evaluated source code.'

File zmq/backend/cython/_zmq.py:1468, in zmq.backend.cython._zmq._send_copy()
-> 1468 'Could not get source, probably due dynamically evaluated source code.'

File zmq/backend/cython/_zmq.py:179, in zmq.backend.cython._zmq._check_rc()
--> 179 'Could not get source, probably due dynamically evaluated source code.\'''')

GB_INTERRUPT = _frames('''\
File SITE/sklearn/base.py:1403, in _fit_context.<locals>.decorator.<locals>.wrapper(estimato\
r, *args, **kwargs)
   1393     estimator._validate_params()
   1395 with (
   1396     config_context(
   1397         skip_parameter_validation=(
   (...)   1401     callback_management_context(estimator),
   1402 ):
-> 1403     return fit_method(estimator, *args, **kwargs)

File SITE/sklearn/ensemble/_gb.py:806, in BaseGradientBoosting.fit(self, X, y, sample_weight\
, monitor)
    803     self._resize_state()
    805 # fit the boosting stages
--> 806 n_stages = self._fit_stages(
    807     X_train,
    808     y_train,
    809     raw_predictions,
    810     sample_weight_train,
    811     self._rng,
    812     X_val,
    813     y_val,
    814     sample_weight_val,
    815     begin_at_stage,
    816     monitor,
    817 )
    819 # change shape of arrays after fit (early-stopping or additional ests)
    820 if n_stages != self.estimators_.shape[0]:

File SITE/sklearn/ensemble/_gb.py:902, in BaseGradientBoosting._fit_stages(self, X, y, raw_p\
redictions, sample_weight, random_state, X_val, y_val, sample_weight_val, begin_at_stage, mo\
nitor)
    895         initial_loss = factor * self._loss(
    896             y_true=y_oob_masked,
    897             raw_prediction=raw_predictions[~sample_mask],
    898             sample_weight=sample_weight_oob_masked,
    899         )
    901 # fit next stage of trees
--> 902 raw_predictions = self._fit_stage(
    903     i,
    904     X,
    905     y,
    906     raw_predictions,
    907     sample_weight,
    908     sample_mask,
    909     random_state,
    910     X_csc=X_csc,
    911     X_csr=X_csr,
    912 )
    914 # track loss
    915 if do_oob:

File SITE/sklearn/ensemble/_gb.py:500, in BaseGradientBoosting._fit_stage(self, i, X, y, raw\
_predictions, sample_weight, sample_mask, random_state, X_csc, X_csr)
    497     sample_weight = sample_weight * sample_mask.astype(np.float64)
    499 X = X_csc if X_csc is not None else X
--> 500 tree.fit(
    501     X, neg_g_view[:, k], sample_weight=sample_weight, check_input=False
    502 )
    504 # update tree leaves
    505 X_for_tree_update = X_csr if X_csr is not None else X

File SITE/sklearn/base.py:1403, in _fit_context.<locals>.decorator.<locals>.wrapper(estimato\
r, *args, **kwargs)
   1393     estimator._validate_params()
   1395 with (
   1396     config_context(
   1397         skip_parameter_validation=(
   (...)   1401     callback_management_context(estimator),
   1402 ):
-> 1403     return fit_method(estimator, *args, **kwargs)

File SITE/sklearn/tree/_classes.py:1399, in DecisionTreeRegressor.fit(self, X, y, sample_wei\
ght, check_input)
   1369 @_fit_context(prefer_skip_nested_validation=True)
   1370 def fit(self, X, y, sample_weight=None, check_input=True):
   1371     """Build a decision tree regressor from the training set (X, y).
   1372\x20
   1373     Parameters
   (...)   1396         Fitted estimator.
   1397     """
-> 1399     super()._fit(
   1400         X,
   1401         y,
   1402         sample_weight=sample_weight,
   1403         check_input=check_input,
   1404     )
   1405     return self

File SITE/sklearn/tree/_classes.py:467, in BaseDecisionTree._fit(self, X, y, sample_weight, \
check_input, missing_values_in_feature_mask)
    456 else:
    457     builder = BestFirstTreeBuilder(
    458         splitter,
    459         min_samples_split,
   (...)    464         self.min_impurity_decrease,
    465     )
--> 467 builder.build(self.tree_, X, y, sample_weight, missing_values_in_feature_mask)
    469 if self.n_outputs_ == 1 and is_classifier(self):
    470     self.n_classes_ = self.n_classes_[0]''')

RAISERS: dict[str, Callable[[Program, Code, str, str], str]] = {
    "key_error": _raise_key_error,
    "strings": _raise_at("fit", STRINGS_FRAMES),
    "nan": _raise_at("fit", NAN_FRAMES),
    "name": _raise_at("labels", []),
    "length": _raise_at("assign", LENGTH_FRAMES),
}
