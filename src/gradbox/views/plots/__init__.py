"""pyqtgraph views: decision boundary, loss curve, landscape, per-layer statistics."""
