"""Card detection (onnxruntime), table calibration and tracking, synthetic data and training."""
