"""Alert channels (``[tool.mir.alerts]``: a command and/or a webhook) and the review
alerts sent through them (public interface)."""

from mir.alerts.channels import AlertSettings
from mir.alerts.channels import send as send_alert
from mir.alerts.review import (
    ReviewSettings,
    SentLog,
    flow_link,
    key_fields,
    review_payload,
    send_review_alerts,
    wanted,
)

__all__ = [
    "AlertSettings",
    "ReviewSettings",
    "SentLog",
    "flow_link",
    "key_fields",
    "review_payload",
    "send_alert",
    "send_review_alerts",
    "wanted",
]
