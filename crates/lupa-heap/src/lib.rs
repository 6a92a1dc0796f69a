//! heap
