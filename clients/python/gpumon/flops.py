"""Peak FLOP/s of common GPUs by data type, for model FLOPs utilisation (MFU).

Contract:
- PEAK_FLOPS maps a GPU model key to {dtype: FLOP/s}. Figures are the vendor's
  dense peaks (no structured sparsity), per GPU, for tensor-core math where
  the GPU has it (fp32 is the non-tensor CUDA-core figure). Each entry names
  the document it comes from.
- dtype keys: "fp64", "fp32", "tf32", "bf16", "fp16", "fp8"; normalize_dtype()
  also accepts torch dtypes and their names ("torch.bfloat16", "float16",
  "half", ...).
- model_key(device_name) maps a torch.cuda.get_device_name() / nvidia-smi
  name ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", ...) to a key, or
  None when the GPU is not in the table.
- peak_flops(device_name, dtype) returns FLOP/s or None; callers override the
  table by passing their own figure (TrainingMonitor(peak_flops=...)).
"""

import re
from typing import Dict, Optional

TERA = 1e12

# fmt: off
PEAK_FLOPS: Dict[str, Dict[str, float]] = {
    # NVIDIA Tesla V100 datasheet (SXM2 / PCIe). No bf16 or tf32 support.
    "V100-SXM": {"fp64": 7.8 * TERA, "fp32": 15.7 * TERA, "fp16": 125 * TERA},
    "V100-PCIE": {"fp64": 7 * TERA, "fp32": 14 * TERA, "fp16": 112 * TERA},
    # NVIDIA A100 Tensor Core GPU datasheet (SXM and PCIe list the same peaks).
    "A100-SXM": {"fp64": 19.5 * TERA, "fp32": 19.5 * TERA, "tf32": 156 * TERA,
                 "bf16": 312 * TERA, "fp16": 312 * TERA},
    "A100-PCIE": {"fp64": 19.5 * TERA, "fp32": 19.5 * TERA, "tf32": 156 * TERA,
                  "bf16": 312 * TERA, "fp16": 312 * TERA},
    # NVIDIA H100 Tensor Core GPU datasheet; its tensor figures are with
    # sparsity, halved here to the dense peaks.
    "H100-SXM": {"fp64": 67 * TERA, "fp32": 67 * TERA, "tf32": 494.5 * TERA,
                 "bf16": 989.5 * TERA, "fp16": 989.5 * TERA, "fp8": 1979 * TERA},
    "H100-PCIE": {"fp64": 51 * TERA, "fp32": 51 * TERA, "tf32": 378 * TERA,
                  "bf16": 756 * TERA, "fp16": 756 * TERA, "fp8": 1513 * TERA},
    "H100-NVL": {"fp64": 60 * TERA, "fp32": 60 * TERA, "tf32": 417.5 * TERA,
                 "bf16": 835.5 * TERA, "fp16": 835.5 * TERA, "fp8": 1670.5 * TERA},
    # NVIDIA H200 Tensor Core GPU datasheet (SXM and NVL), sparse figures halved.
    "H200-SXM": {"fp64": 67 * TERA, "fp32": 67 * TERA, "tf32": 494.5 * TERA,
                 "bf16": 989.5 * TERA, "fp16": 989.5 * TERA, "fp8": 1979 * TERA},
    "H200-NVL": {"fp64": 60 * TERA, "fp32": 60 * TERA, "tf32": 417.5 * TERA,
                 "bf16": 835.5 * TERA, "fp16": 835.5 * TERA, "fp8": 1670.5 * TERA},
    # NVIDIA HGX B200 datasheet (8-GPU board figures / 8, sparse halved).
    "B200": {"fp64": 37 * TERA, "fp32": 75 * TERA, "tf32": 1125 * TERA,
             "bf16": 2250 * TERA, "fp16": 2250 * TERA, "fp8": 4500 * TERA},
    # NVIDIA GB200 NVL72 datasheet (72-GPU rack figures / 72, sparse halved).
    "GB200": {"fp64": 40 * TERA, "fp32": 80 * TERA, "tf32": 1250 * TERA,
              "bf16": 2500 * TERA, "fp16": 2500 * TERA, "fp8": 5000 * TERA},
    # NVIDIA L40S datasheet, sparse halved.
    "L40S": {"fp32": 91.6 * TERA, "tf32": 183 * TERA, "bf16": 362 * TERA,
             "fp16": 362 * TERA, "fp8": 733 * TERA},
    # NVIDIA L4 Tensor Core GPU datasheet, sparse halved.
    "L4": {"fp32": 30.3 * TERA, "tf32": 60 * TERA, "bf16": 121 * TERA,
           "fp16": 121 * TERA, "fp8": 242.5 * TERA},
    # NVIDIA A10 Tensor Core GPU datasheet, sparse halved.
    "A10": {"fp32": 31.2 * TERA, "tf32": 62.5 * TERA, "bf16": 125 * TERA,
            "fp16": 125 * TERA},
    # NVIDIA Ada GPU architecture whitepaper (appendix, GeForce RTX 4090):
    # tensor figures with FP32 accumulate, dense.
    "RTX-4090": {"fp32": 82.6 * TERA, "tf32": 82.6 * TERA, "bf16": 165.2 * TERA,
                 "fp16": 165.2 * TERA, "fp8": 330.3 * TERA},
}
# fmt: on

# Ordered: the first pattern that matches the normalized name wins, so the
# more specific variants come first. \b keeps "A10" from matching "A100" or
# "A10G" and "L4" from matching "L40S".
_MODEL_PATTERNS = (
    (re.compile(r"\bGB200\b"), "GB200"),
    (re.compile(r"\bB200\b"), "B200"),
    (re.compile(r"\bH200\b.*\bNVL\b"), "H200-NVL"),
    (re.compile(r"\bH200\b"), "H200-SXM"),
    (re.compile(r"\bH100\b.*\bNVL\b"), "H100-NVL"),
    (re.compile(r"\bH100\b.*\bPCIE\b"), "H100-PCIE"),
    (re.compile(r"\bH100\b"), "H100-SXM"),
    (re.compile(r"\bA100\b.*\bPCIE\b"), "A100-PCIE"),
    (re.compile(r"\bA100\b"), "A100-SXM"),
    (re.compile(r"\bL40S\b"), "L40S"),
    (re.compile(r"\bL4\b"), "L4"),
    (re.compile(r"\bA10\b"), "A10"),
    (re.compile(r"\bV100\b.*\bPCIE\b"), "V100-PCIE"),
    (re.compile(r"\bV100\b"), "V100-SXM"),
    (re.compile(r"\bRTX 4090\b"), "RTX-4090"),
)

_DTYPE_ALIASES = {
    "fp64": "fp64", "float64": "fp64", "double": "fp64",
    "fp32": "fp32", "float32": "fp32", "float": "fp32",
    "tf32": "tf32",
    "bf16": "bf16", "bfloat16": "bf16",
    "fp16": "fp16", "float16": "fp16", "half": "fp16",
    "fp8": "fp8", "float8_e4m3fn": "fp8", "float8_e5m2": "fp8",
}


def normalize_dtype(dtype) -> str:
    """"bf16" for "bf16", "bfloat16", "torch.bfloat16" or torch.bfloat16; etc.
    Raises ValueError for an unknown dtype."""
    text = str(dtype).strip().lower()
    if text.startswith("torch."):
        text = text[len("torch."):]
    try:
        return _DTYPE_ALIASES[text]
    except KeyError:
        known = ", ".join(sorted(set(_DTYPE_ALIASES.values())))
        raise ValueError(f"gpumon: unknown dtype {dtype!r} (known: {known})") from None


def model_key(device_name: Optional[str]) -> Optional[str]:
    """The PEAK_FLOPS key of a GPU's name, or None when it is not listed."""
    if not device_name:
        return None
    name = " ".join(str(device_name).upper().replace("-", " ").replace("_", " ").split())
    for pattern, key in _MODEL_PATTERNS:
        if pattern.search(name):
            return key
    return None


def peak_flops(device_name: Optional[str], dtype="bf16") -> Optional[float]:
    """Dense peak FLOP/s of the named GPU for dtype, or None when unknown."""
    key = model_key(device_name)
    if key is None:
        return None
    return PEAK_FLOPS[key].get(normalize_dtype(dtype))
