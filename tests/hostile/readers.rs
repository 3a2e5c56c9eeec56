//! Readers: broken CSV quotes, HTML detection, very large documents, unknown formats and random
//! bytes into every reader and into `canon` and `compare`.
