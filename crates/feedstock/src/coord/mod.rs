//! Coordinator and queue runners: starting, stopping and joining the
//! threads of a pipeline.
