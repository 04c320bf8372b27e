//! The endpoints of `server/src/http/notify.rs`.

endpoints! {
    group NOTIFY;

    /// Every notification channel, by name (administrators only: a channel's URL may be its
    /// credential). Slack and Teams URLs are shown as their scheme and host only; a signed
    /// webhook's secret is never shown, only its fingerprint. docs/notifications.md.
    LIST_NOTIFICATION_CHANNELS = listNotificationChannels, list_notification_channels():
        GET "/api/notification-channels", Admin, "list notification channels" {
        tag: "notifications",
        answers: vec![
            (200, Answer::Json {
                description: "The channels.",
                schema: of::<NotificationChannelList>(),
                extra: None,
            }),
            (400, Answer::Shared("BadAuthorizationHeader")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// Creates a channel (administrators only). After each driver pass, every recommendation of
    /// an estate's newest advice whose gain is at least `min_gain` and whose confidence is
    /// `min_confidence` or better is sent to it once per estate version. A `webhook` channel
    /// gets a secret, returned in `secret` this once; its requests are signed like decider
    /// calls. The URL follows the forwarding rules of deciders (docs/forwarding.md): loopback
    /// and private addresses only when allowed by `--decider-allow`. Every field error is
    /// reported at once (`422`, nothing written).
    CREATE_NOTIFICATION_CHANNEL = createNotificationChannel, create_notification_channel():
        POST "/api/notification-channels", Admin, "create a notification channel" {
        tag: "notifications",
        body: Some(Body::Json {
            required: true,
            description: None,
            schema: of::<NewNotificationChannel>(),
            extra: Some(json!({
                "example": {
                    "name": "ops-hook",
                    "kind": "webhook",
                    "url": "https://receiver.example.com/berth",
                    "min_gain": 5,
                    "min_confidence": "reported"
                }
            })),
        }),
        answers: vec![
            (201, Answer::Json {
                description: "Created; `secret` is the signed channel's secret, shown only now.",
                schema: of::<NotificationChannelWithSecret>(),
                extra: None,
            }),
            (400, Answer::Shared("BadRequest")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (409, Answer::Json {
                description: "A channel of this name exists, or a `webhook` channel was asked for on a server with no secret key to seal its secret with.",
                schema: named("ConflictError"),
                extra: None,
            }),
            (413, Answer::Shared("TooLarge")),
            (422, Answer::Shared("InvalidChannel")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    GET_NOTIFICATION_CHANNEL = getNotificationChannel, get_notification_channel(name):
        GET "/api/notification-channels/{name}", Admin, "a notification channel" {
        tag: "notifications",
        params: vec![
            Param::Shared("ChannelName"),
        ],
        answers: vec![
            (200, Answer::Json {
                description: "The channel.",
                schema: of::<NotificationChannelAnswer>(),
                extra: None,
            }),
            (400, Answer::Shared("BadAuthorizationHeader")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoChannel")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// Replaces the channel's settings: `url` is required (a Slack or Teams URL is never shown
    /// back, so send it again), omitted `min_gain`, `min_confidence` and `enabled` take their
    /// defaults (`0`, `guessed`, `true`). `name` and `kind`, if given, must be the channel's
    /// own. The next pass looks at every estate's newest advice again under the new thresholds;
    /// what was sent is not sent again.
    UPDATE_NOTIFICATION_CHANNEL = updateNotificationChannel, update_notification_channel(name):
        PUT "/api/notification-channels/{name}", Admin, "change a channel's URL, thresholds or enabled flag" {
        tag: "notifications",
        params: vec![
            Param::Shared("ChannelName"),
        ],
        body: Some(Body::Json {
            required: true,
            description: None,
            schema: of::<NotificationChannelSettings>(),
            extra: Some(json!({
                "example": {
                    "url": "https://receiver.example.com/berth",
                    "min_gain": 10,
                    "min_confidence": "measured",
                    "enabled": true
                }
            })),
        }),
        answers: vec![
            (200, Answer::Json {
                description: "The channel as it is now.",
                schema: of::<NotificationChannelAnswer>(),
                extra: None,
            }),
            (400, Answer::Shared("BadRequest")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoChannel")),
            (413, Answer::Shared("TooLarge")),
            (422, Answer::Shared("InvalidChannel")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// Deletes the channel, its sealed secret and its deliveries (pending ones are not sent).
    DELETE_NOTIFICATION_CHANNEL = deleteNotificationChannel, delete_notification_channel(name):
        DELETE "/api/notification-channels/{name}", Admin, "delete a notification channel and its deliveries" {
        tag: "notifications",
        params: vec![
            Param::Shared("ChannelName"),
        ],
        answers: vec![
            (204, Answer::Empty("Deleted.")),
            (400, Answer::Shared("BadAuthorizationHeader")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoChannel")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// Generates a new secret for a `webhook` channel and returns it this once. It signs from
    /// the next attempt on and the old one stops at once (no overlap: a receiver that keeps
    /// both for a while loses nothing, since undelivered events are retried). Slack and Teams
    /// channels have no secret (`422`).
    ROTATE_NOTIFICATION_CHANNEL_SECRET = rotateNotificationChannelSecret, rotate_notification_channel_secret(name):
        POST "/api/notification-channels/{name}/secret", Admin, "replace a signed channel's secret (shown once)" {
        tag: "notifications",
        params: vec![
            Param::Shared("ChannelName"),
        ],
        answers: vec![
            (200, Answer::Json {
                description: "The new secret and the channel.",
                schema: of::<NotificationChannelWithSecret>(),
                extra: None,
            }),
            (400, Answer::Shared("BadAuthorizationHeader")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoChannel")),
            (409, Answer::Shared("NoSecretKey")),
            (422, Answer::Shared("InvalidChannel")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// Deliveries newest first, as the Health page shows them: each recommendation queued for a
    /// channel, its status (`pending` until delivered or given up, `delivered`, `failed`),
    /// attempts, when the next one is due, the last reply's status and the last error. A failed
    /// attempt is retried after 30 s, the delay doubling up to an hour (longer if the
    /// receiver's `Retry-After` asks, up to the same hour); after 10 attempts, or at once on a
    /// `4xx` other than `408` and `429`, the delivery is `failed`.
    LIST_NOTIFICATION_DELIVERIES = listNotificationDeliveries, list_notification_deliveries() ["limit", "channel", "status"]:
        GET "/api/notification-deliveries", Viewer, "recent notification deliveries and failures" {
        tag: "notifications",
        params: vec![
            Param::Inline(json!({
                "name": "limit",
                "in": "query",
                "required": false,
                "description": "How many, newest first; 50 by default, at most 200.",
                "schema": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 200
                },
                "example": 50
            })),
            Param::Inline(json!({
                "name": "channel",
                "in": "query",
                "required": false,
                "description": "Only this channel's.",
                "schema": {
                    "type": "string"
                }
            })),
            Param::Inline(json!({
                "name": "status",
                "in": "query",
                "required": false,
                "description": "Only deliveries in this status.",
                "schema": {
                    "enum": [
                        "pending",
                        "delivered",
                        "failed"
                    ]
                }
            })),
        ],
        answers: vec![
            (200, Answer::Json {
                description: "The deliveries.",
                schema: of::<NotificationDeliveryList>(),
                extra: None,
            }),
            (400, Answer::Shared("BadRequest")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }
}
