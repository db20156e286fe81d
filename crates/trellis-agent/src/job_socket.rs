//! The per-job socket (design §4.9.1): what a jailed agent's `trellis _mcp`
//! reaches instead of the daemon's own socket. It is a second `trellis-rpc`
//! server in the daemon, bound in the job's scratch directory, that answers
//! `rpc.hello` and `job.tool` for its one job and refuses every other method —
//! so nothing in the jail can queue a lowering, adopt, stop the daemon or touch
//! another job, even by speaking the protocol itself.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use serde_json::Value;
use trellis_diag::Diagnostic;
use trellis_rpc::{Answer, Handler, Notifier, RpcError, Server, ServerConfig, ShutdownHandle};

use trellis_service::codes::HostCode;
use trellis_service::identity::binary_identity;
use trellis_service::service::Service;

/// A listening job socket; dropping it stops the server and removes the socket.
pub struct JobSocket {
    path: PathBuf,
    shutdown: ShutdownHandle,
    serving: Option<JoinHandle<()>>,
}

struct OneJob {
    service: Arc<Mutex<Service>>,
    job: String,
}

impl Handler for OneJob {
    fn handle(&self, method: &str, params: Value, notifier: &mut Notifier<'_>) -> Answer {
        self.answer(method, &params, &mut |event| {
            let _ = notifier.notify("progress", event);
        })
    }
}

impl OneJob {
    fn answer(
        &self,
        method: &str,
        params: &Value,
        progress: &mut dyn FnMut(Value),
    ) -> Result<Value, RpcError> {
        if method != "job.tool" {
            return Err(RpcError::method_not_found(method).with_diagnostics(&[
                HostCode::JobNotFound.diagnostic(format!(
                    "this socket serves the tools of job {} and nothing else",
                    self.job
                )),
            ]));
        }
        if params["job"].as_str() != Some(self.job.as_str()) {
            return Err(RpcError::failed(&[HostCode::JobNotFound
                .diagnostic(format!("this socket serves job {} only", self.job))]));
        }
        let mut service = self.service.lock().unwrap_or_else(PoisonError::into_inner);
        service.handle(method, params, progress)
    }
}

impl JobSocket {
    /// Binds `path` (its directory must be private) and serves `job`'s tools.
    pub fn start(
        service: Arc<Mutex<Service>>,
        job: &str,
        path: &Path,
    ) -> Result<JobSocket, Diagnostic> {
        let server = Server::bind(path, ServerConfig::new(binary_identity())).map_err(|error| {
            HostCode::JobProviderError.diagnostic(format!(
                "cannot bind the job's socket {}: {}",
                path.display(),
                error.to_diagnostic().message
            ))
        })?;
        let shutdown = server.shutdown_handle();
        let handler = OneJob {
            service,
            job: job.to_owned(),
        };
        let serving = std::thread::Builder::new()
            .name(format!("trellis-{job}-socket"))
            .spawn(move || {
                let _ = server.serve(handler);
            })
            .map_err(|error| {
                HostCode::JobProviderError
                    .diagnostic(format!("cannot start the job's socket thread: {error}"))
            })?;
        Ok(JobSocket {
            path: path.to_owned(),
            shutdown,
            serving: Some(serving),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for JobSocket {
    fn drop(&mut self) {
        self.shutdown.shutdown();
        if let Some(serving) = self.serving.take() {
            let _ = serving.join();
        }
    }
}
