//! Accessibility: the tree the page agent computes (the roles and names its snapshots
//! use), in Chrome's `AXNode` shape with Chrome's role names; each node's
//! `backendDOMNodeId` is its ref, which `DOM.resolveNode` reaches from any world.

use serde_json::{json, Value};

use super::PageSession;
use crate::cdp::wire::{ProtocolError, Reply};
use crate::engine::agent::{AgentRequest, AxTree, AxTreeAnswer};
use crate::engine::TabRequest;

/// Nodes a tree answer carries at most.
const MAX_NODES: usize = 10_000;

impl PageSession {
    async fn ax_tree(&self, root: Option<u64>) -> Result<Vec<Value>, ProtocolError> {
        let request = AxTree { root, max_nodes: MAX_NODES };
        let args = serde_json::to_value(&request).map_err(|error| ProtocolError::server(error.to_string()))?;
        let answer: Value = self.ask(TabRequest::Agent { frame: Vec::new(), op: AxTree::OP, args }).await?;
        let tree: AxTreeAnswer =
            serde_json::from_value(answer).map_err(|error| ProtocolError::server(format!("accessibility tree: {error}")))?;
        Ok(tree.nodes)
    }

    pub(super) async fn full_ax_tree(&self, _params: &Value) -> Reply {
        let mut nodes = self.ax_tree(None).await?;
        for node in &mut nodes {
            node["frameId"] = json!(self.frame_id);
        }
        Ok(json!({ "nodes": nodes }))
    }

    /// Nodes of a subtree whose accessible name (and role) match.
    pub(super) async fn query_ax_tree(&self, params: &Value) -> Reply {
        let root = if params.get("objectId").is_some_and(|id| !id.is_null())
            || params.get("backendNodeId").is_some_and(|id| !id.is_null())
            || params.get("nodeId").is_some_and(|id| !id.is_null())
        {
            Some(self.node_of(params).await?)
        } else {
            None
        };
        let name = params["accessibleName"].as_str();
        let role = params["role"].as_str();
        let nodes = self.ax_tree(root).await?;
        let found: Vec<Value> = nodes
            .into_iter()
            .filter(|node| node["ignored"] != true)
            .filter(|node| name.is_none_or(|name| node["name"]["value"].as_str() == Some(name)))
            .filter(|node| role.is_none_or(|role| node["role"]["value"].as_str() == Some(role)))
            .filter(|node| node["role"]["value"] != "StaticText" || role == Some("StaticText"))
            .collect();
        Ok(json!({ "nodes": found }))
    }
}
