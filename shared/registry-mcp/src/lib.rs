//! The MCP server at `/mcp` (Model Context Protocol, Streamable HTTP, stateless, JSON answers), on
//! rmcp, the protocol's Rust SDK. Off unless `REGISTRY_MCP_ENABLED=true`.
//!
//! Each tool and each resource read is a request of the REST API, sent to the same routes the HTTP
//! API serves and carrying the extensions of the `/mcp` request (so the caller the authentication
//! layer identified): the same handlers, the same authorization (a scoped user reaches only its
//! subjects, 403 otherwise) and the same Confluent answers. A tool's result is the REST answer's
//! JSON; an error answer is a tool error carrying Confluent's `{"error_code","message"}`. Tools
//! that write or delete run only with `"confirm": true`; without it (or with `"dry_run": true`)
//! they answer the request they would send. Tool names, argument names and resource URIs are
//! AxonOps Schema Registry's, so assistants configured for it work here.
//!
//! Stateless: no session is kept between requests, so any Lambda instance answers any request.

mod resources;
mod tools;

use axum::body::Body;
use axum::http::{Extensions, Request, StatusCode, header};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ResourceContents, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use std::sync::Arc;
use tools::{Effect, Planned, Spec};
use tower::ServiceExt;

/// Largest REST answer a tool returns (a listing over it is cut by its own `limit`).
const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// Most schemas one `import_schemas` call registers.
const MAX_IMPORT: usize = 1000;

/// The `/mcp` service over `api`, the REST routes (without the authentication layer, which runs
/// before `/mcp`): each request to `api` carries what `carry` keeps of the `/mcp` request's
/// extensions (the caller the authentication layer identified).
pub fn service(api: axum::Router, carry: Carry) -> StreamableHttpService<McpServer, NeverSessionManager> {
    // Served behind Function URLs, CloudFront and custom domains: the Host check rmcp makes for
    // loopback servers would refuse them; authentication is what guards the endpoint.
    let mut config = StreamableHttpServerConfig::default().disable_allowed_hosts();
    config.legacy_session_mode = false;
    config.json_response = true;
    let server = McpServer { api, carry };
    StreamableHttpService::new(move || Ok(server.clone()), Arc::new(NeverSessionManager::default()), config)
}

/// The MCP server: tools and resources over the REST routes.
#[derive(Clone)]
pub struct McpServer {
    api: axum::Router,
    carry: Carry,
}

/// What a request to the REST routes keeps of the `/mcp` request's extensions.
pub type Carry = fn(&Extensions) -> Extensions;

/// What `carry` keeps of the extensions of the HTTP request an MCP request came in (the caller);
/// nothing when the transport is not HTTP, so the routes refuse it when authentication is on.
fn caller_extensions(context: &RequestContext<RoleServer>, carry: Carry) -> Extensions {
    context.extensions.get::<axum::http::request::Parts>().map(|parts| carry(&parts.extensions)).unwrap_or_default()
}

/// What a confirmable tool answers without `confirm: true`.
fn preview(spec: &Spec, requests: &[Planned]) -> CallToolResult {
    let requests: Vec<Value> = requests
        .iter()
        .map(|request| json!({"method": request.method.as_str(), "path": request.path, "body": request.body}))
        .collect();
    let body = json!({
        "confirmation_required": true,
        "message": format!("{} changes the registry: call it again with \"confirm\": true to run it", spec.name),
        "requests": requests,
    });
    CallToolResult::error(vec![ContentBlock::text(body.to_string())])
}

impl McpServer {
    /// Sends `planned` to the REST routes with `extensions`; the answer's status and body.
    async fn send(&self, planned: &Planned, extensions: Extensions) -> Result<(StatusCode, String), String> {
        let body = match &planned.body {
            Some(value) => Body::from(value.to_string()),
            None => Body::empty(),
        };
        let mut request = Request::builder()
            .method(planned.method.clone())
            .uri(&planned.path)
            .header(header::CONTENT_TYPE, "application/vnd.schemaregistry.v1+json")
            .header(header::ACCEPT, "application/json")
            .body(body)
            .map_err(|error| format!("bad request: {error}"))?;
        *request.extensions_mut() = extensions;
        let response = match self.api.clone().oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        };
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), MAX_ANSWER_BYTES)
            .await
            .map_err(|error| format!("answer not read: {error}"))?;
        Ok((status, String::from_utf8_lossy(&bytes).into_owned()))
    }

    /// `import_schemas`: the registrations in order, stopping at the first refused one; the
    /// answers so far.
    async fn import(&self, requests: &[Planned], extensions: Extensions) -> Result<CallToolResult, ErrorData> {
        let mut answers = Vec::with_capacity(requests.len());
        for request in requests {
            let (status, answer) = self
                .send(request, extensions.clone())
                .await
                .map_err(|reason| ErrorData::internal_error(reason, None))?;
            let answer: Value = serde_json::from_str(&answer).unwrap_or(Value::String(answer));
            if !status.is_success() {
                let body = json!({"imported": answers, "failed": {"path": request.path, "answer": answer}});
                return Ok(CallToolResult::error(vec![ContentBlock::text(body.to_string())]));
            }
            answers.push(answer);
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(json!({"imported": answers}).to_string())]))
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("schema-registry", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "A Confluent-compatible Schema Registry: subjects, versions, schema IDs, compatibility, config, \
             mode, contexts, schema linking, encryption keys, and analysis (search by field or type, diff, \
             quality, dependencies). Tools that change the registry need \"confirm\": true.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::all().map(tools::tool).collect()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::find(name).map(tools::tool)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(spec) = tools::find(&request.name) else {
            return Err(ErrorData::invalid_params(format!("unknown tool {}", request.name), None));
        };
        let arguments = request.arguments.unwrap_or_default();
        let planned = match spec.name == tools::IMPORT.name {
            true => tools::plan_import(&arguments),
            false => tools::plan(spec, &arguments).map(|planned| vec![planned]),
        };
        let planned = match planned {
            Ok(planned) if planned.len() <= MAX_IMPORT => planned,
            Ok(_) => {
                return Ok(
                    CallToolResult::error(vec![ContentBlock::text(format!("at most {MAX_IMPORT} schemas"))]).into()
                );
            }
            Err(reason) => return Ok(CallToolResult::error(vec![ContentBlock::text(reason)]).into()),
        };
        let confirmed = arguments.get("confirm").and_then(Value::as_bool) == Some(true);
        let dry_run = arguments.get("dry_run").and_then(Value::as_bool) == Some(true);
        if spec.effect != Effect::Reads && (!confirmed || dry_run) {
            return Ok(preview(spec, &planned).into());
        }
        let extensions = caller_extensions(&context, self.carry);
        if spec.name == tools::IMPORT.name {
            return Ok(self.import(&planned, extensions).await?.into());
        }
        let Some(request) = planned.first() else {
            return Err(ErrorData::internal_error("no request planned", None));
        };
        let (status, answer) =
            self.send(request, extensions).await.map_err(|reason| ErrorData::internal_error(reason, None))?;
        let content = vec![ContentBlock::text(answer)];
        Ok(match status.is_success() {
            true => CallToolResult::success(content),
            false => CallToolResult::error(content),
        }
        .into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(resources::listed()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(resources::templates()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let Some(path) = resources::path_of(&request.uri) else {
            return Err(ErrorData::resource_not_found(format!("no resource {}", request.uri), None));
        };
        let planned = Planned { method: axum::http::Method::GET, path, body: None };
        let (status, answer) = self
            .send(&planned, caller_extensions(&context, self.carry))
            .await
            .map_err(|reason| ErrorData::internal_error(reason, None))?;
        if !status.is_success() {
            let data = serde_json::from_str::<Value>(&answer).ok();
            return Err(match status {
                StatusCode::NOT_FOUND => ErrorData::resource_not_found(format!("{}: {answer}", request.uri), data),
                _ => ErrorData::invalid_request(format!("{} ({status}): {answer}", request.uri), data),
            });
        }
        let contents = ResourceContents::text(answer, request.uri).with_mime_type("application/json");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}
