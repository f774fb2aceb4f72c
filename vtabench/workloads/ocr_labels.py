"""Labels and scores for the OCR models of :mod:`vtabench.workloads.rapidocr` on rendered text.

* The detector's labels: :func:`line_boxes` reads the boxes of the text lines off a rendered
  page (``text_scenes``: black text on white, each line in its own horizontal band), as the
  rows and columns that hold ink, so the labels come from the pixels the model sees.
* The detector's predictions: :func:`text_boxes` is DBNet's post-processing as the
  ``rapidocr_onnxruntime`` package configures it (``Det`` in its ``config.yaml``: probability
  above ``thresh`` 0.3, the mask dilated by 2 x 2, a region kept when its mean probability is at
  least ``box_thresh`` 0.5 and its short side at least 3 pixels, then grown back by
  ``unclip_ratio`` 1.6: the detector was trained on text regions shrunk by that much), written
  for axis-aligned boxes: a connected region's bounding box instead of a rotated rectangle.
* Scores: :func:`box_iou`, :func:`best_ious` (each box's best overlap with another set),
  :func:`edit_distance` for recognized strings.

A box is ``(y0, x0, y1, x1)`` in pixels, ends exclusive.
"""

from __future__ import annotations

from collections import deque

import numpy as np

Box = tuple[int, int, int, int]

#: DBNet post-processing, as the package's ``config.yaml`` sets it (``Det``).
THRESH = 0.3
BOX_THRESH = 0.5
UNCLIP_RATIO = 1.6
MIN_SIZE = 3


def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) of each run of True in a 1-D bool array."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], flags.astype(np.int8), [0]])))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def line_boxes(page: np.ndarray) -> list[Box]:
    """The text lines of a normalized page (C, H, W) or (1, C, H, W), values in [-1, 1], white
    = 1: each run of rows holding ink (a pixel darker than mid-grey), cut to the columns that
    hold ink in those rows."""
    page = np.asarray(page)
    if page.ndim == 4:
        page = page[0]
    if page.ndim != 3:
        raise ValueError(f"line_boxes: a page of shape (C, H, W), got {page.shape}")
    ink = page.mean(axis=0) < 0.0
    boxes = []
    for y0, y1 in _runs(ink.any(axis=1)):
        cols = np.flatnonzero(ink[y0:y1].any(axis=0))
        boxes.append((y0, int(cols[0]), y1, int(cols[-1]) + 1))
    return boxes


def _components(mask: np.ndarray) -> list[np.ndarray]:
    """The 8-connected regions of a 2-D bool mask, each as an (N, 2) array of (y, x)."""
    seen = np.zeros_like(mask, dtype=bool)
    h, w = mask.shape
    regions = []
    for y, x in zip(*np.nonzero(mask), strict=True):
        if seen[y, x]:
            continue
        seen[y, x] = True
        todo, pixels = deque([(int(y), int(x))]), []
        while todo:
            cy, cx = todo.popleft()
            pixels.append((cy, cx))
            for ny in range(max(cy - 1, 0), min(cy + 2, h)):
                for nx in range(max(cx - 1, 0), min(cx + 2, w)):
                    if mask[ny, nx] and not seen[ny, nx]:
                        seen[ny, nx] = True
                        todo.append((ny, nx))
        regions.append(np.asarray(pixels))
    return regions


def text_boxes(prob: np.ndarray) -> list[Box]:
    """The text boxes of a probability map (H, W), or (1, 1, H, W) as the detector outputs it
    (module docstring: DBNet's post-processing with the package's settings)."""
    prob = np.asarray(prob, np.float32)
    prob = prob.reshape(prob.shape[-2:]) if prob.ndim == 4 and prob.shape[:2] == (1, 1) else prob
    if prob.ndim != 2:
        raise ValueError(f"text_boxes: a probability map (H, W) or (1, 1, H, W), got "
                         f"{prob.shape}")
    h, w = prob.shape
    mask = prob > THRESH
    grown = mask.copy()  # cv2.dilate with a 2 x 2 kernel of ones (anchor at its centre)
    grown[1:] |= mask[:-1]
    grown[:, 1:] |= mask[:, :-1]
    grown[1:, 1:] |= mask[:-1, :-1]
    boxes = []
    for px in _components(grown):
        y0, x0 = px.min(axis=0)
        y1, x1 = px.max(axis=0) + 1
        if min(y1 - y0, x1 - x0) < MIN_SIZE or prob[y0:y1, x0:x1].mean() < BOX_THRESH:
            continue
        d = (y1 - y0) * (x1 - x0) * UNCLIP_RATIO / (2 * ((y1 - y0) + (x1 - x0)))
        box = (max(int(round(y0 - d)), 0), max(int(round(x0 - d)), 0),
               min(int(round(y1 + d)), h), min(int(round(x1 + d)), w))
        if min(box[2] - box[0], box[3] - box[1]) >= MIN_SIZE + 2:
            boxes.append(box)
    return boxes


def box_iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes."""
    ih = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    iw = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ih * iw
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union else 0.0


def best_ious(boxes: list[Box], others: list[Box]) -> list[float]:
    """Per box of ``boxes``: its largest IoU with a box of ``others`` (0 when none overlaps)."""
    return [max((box_iou(b, o) for o in others), default=0.0) for b in boxes]


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance: the fewest insertions, deletions and substitutions from a to b."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]
