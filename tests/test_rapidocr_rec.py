"""PaddleOCR's text recognizer (``ch_PP-OCRv4_rec_infer.onnx``, SVTR-style with a CTC head, as
the ``rapidocr_onnxruntime`` wheel ships it: vtabench.workloads.rapidocr): its fixed input
shape, the rendered text lines it reads, and the CTC greedy decoding with the dictionary the
wheel ships.
"""

from __future__ import annotations

import numpy as np
import pytest

from vtabench.workloads import rapidocr


def test_dictionary_and_decode():
    """The classes are the blank, the model's 6623 characters and the space (the output's
    6625); greedy decoding merges repeats and drops blanks, so a blank separates a doubled
    letter; a wrong class count is refused with the shape."""
    classes = rapidocr.dictionary()
    assert len(classes) == 6625 and classes[0] == "" and classes[-1] == " "
    assert set(rapidocr.ALPHANUMERIC) <= set(classes)
    idx = {c: i for i, c in enumerate(classes)}
    path = [0, idx["a"], idx["a"], 0, idx["a"], idx[" "], idx[" "], idx["b"], 0, 0]
    probs = np.full((len(path), len(classes)), 0.1, np.float32)
    probs[np.arange(len(path)), path] = 0.9
    assert rapidocr.ctc_decode(probs) == "aa b"
    assert rapidocr.ctc_decode(probs[None]) == "aa b"
    with pytest.raises(ValueError, match="expected"):
        rapidocr.ctc_decode(probs[:, :100])


def test_float_recognizer_reads_the_lines():
    """The fixed shape (1, 3, 48, 320) gives (1, 40, 6625); the float model reads at least 7
    of 8 rendered lines exactly (random strings may confuse 0 and O)."""
    import onnxruntime as ort

    model = rapidocr.recognizer_model()
    xs, labels = rapidocr.text_strings(8, seed=2)
    assert xs.shape == (8, *rapidocr.recognizer_shape()[1:]) and len(labels) == 8
    assert xs.dtype == np.float32 and xs.min() >= -1 and xs.max() <= 1
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    read = []
    for x in xs:
        probs = sess.run(None, {model.graph.input[0].name: x[None]})[0]
        assert probs.shape == (1, 40, 6625)
        read.append(rapidocr.ctc_decode(probs))
    assert sum(r == t for r, t in zip(read, labels)) >= 7, list(zip(read, labels))
