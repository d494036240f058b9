"""KServe's model-format fields: where an InferenceService component keeps one more container.

Here rather than in gpulint.operators, which builds those pods: the table of workload shapes
(gpulint.shapes) lists these containers at every start, and the builders are imported only
for a run that meets such an object.
"""

#: KServe components are pod specs with extra fields: a predictor's model-format field
#: (`model`, `pytorch`, ...) is one more container, the one the serving runtime's container is
#: merged with (https://github.com/kserve/kserve pkg/apis/serving/v1beta1/predictor.go).
KSERVE_FORMATS = (
    "model",
    "sklearn",
    "xgboost",
    "tensorflow",
    "pytorch",
    "triton",
    "onnx",
    "huggingface",
    "pmml",
    "lightgbm",
    "paddle",
)
