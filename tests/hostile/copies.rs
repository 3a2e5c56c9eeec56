//! Copies beyond the bucket bound: thousands of identical and near-identical documents.
