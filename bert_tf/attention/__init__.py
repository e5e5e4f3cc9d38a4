"""Attention maps as data, TensorFlow-free: the checked reader of stored
maps (`maps`), the per-head change between two models (`divergence`), the
PNG figures (`figures`) and the self-contained interactive page (`page`,
with its inline `views.js`, `page.js` and `page.css`)."""
