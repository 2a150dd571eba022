"""A desktop session's side of the tray and notification protocols, on a private D-Bus.

It plays what a Linux panel and notification daemon do:
- owns org.kde.StatusNotifierWatcher, so the daemon's tray icon (libayatana-appindicator)
  registers its StatusNotifierItem here;
- reads that item's menu and clicks its entries over com.canonical.dbusmenu, as a panel
  does when a person opens the tray menu;
- owns org.freedesktop.Notifications and records every notification it is asked to show
  or withdraw.

Commands come as JSON lines on stdin, one answer per line on stdout:
  {"do": "items"}              -> {"items": [[bus_name, object_path], ...]}
  {"do": "menu"}               -> {"menu": [{"id", "label", "enabled"}, ...]} (flattened)
  {"do": "click", "id": N}     -> {"clicked": N}
  {"do": "icon"}               -> {"icon": IconName} (a PNG path, for libayatana-appindicator)
  {"do": "notifications"}      -> {"notifications": [{"id", "app_name", "summary", "body",
                                   "actions", "hints", "closed"}, ...]}
  {"do": "invoke", "id": N}    -> {"invoked": N} (a person clicks notification N)
  {"do": "invoke", "id": N, "action": KEY}
                               -> {"invoked": N} (a person presses the button KEY of N;
                                   the server then closes N, reason 3, as servers do)
  {"do": "dismiss", "id": N}   -> {"dismissed": N} (a person closes N: NotificationClosed,
                                   reason 2)
The first line out is {"ready": true}, once both names are owned.
"""

import asyncio
import json
import sys

from dbus_next import Message, MessageType, Variant
from dbus_next.aio import MessageBus

WATCHER = "org.kde.StatusNotifierWatcher"
NOTIFICATIONS = "org.freedesktop.Notifications"
PROPERTIES = "org.freedesktop.DBus.Properties"

items = []
notifications = []


def reply(message, signature="", body=()):
    return Message.new_method_return(message, signature, list(body))


def watcher_properties():
    return {
        "RegisteredStatusNotifierItems": Variant("as", [f"{name}{path}" for name, path in items]),
        "IsStatusNotifierHostRegistered": Variant("b", True),
        "ProtocolVersion": Variant("i", 0),
    }


def handle(message):
    if message.message_type != MessageType.METHOD_CALL:
        return None
    interface, member = message.interface, message.member
    if interface == WATCHER and member == "RegisterStatusNotifierItem":
        service = message.body[0]
        # An item names itself by object path (on the caller's connection) or by bus name.
        if service.startswith("/"):
            items.append((message.sender, service))
        else:
            items.append((service, "/StatusNotifierItem"))
        return reply(message)
    if interface == WATCHER and member == "RegisterStatusNotifierHost":
        return reply(message)
    if interface == PROPERTIES and message.path == "/StatusNotifierWatcher":
        if member == "Get":
            return reply(message, "v", [watcher_properties()[message.body[1]]])
        if member == "GetAll":
            return reply(message, "a{sv}", [watcher_properties()])
    if interface == NOTIFICATIONS:
        if member == "Notify":
            app_name, replaces_id, _icon, summary, body, actions, hints, _timeout = message.body
            number = replaces_id or len(notifications) + 1
            notifications.append({
                "id": number, "app_name": app_name, "summary": summary, "body": body, "actions": actions,
                "hints": {key: value.value for key, value in hints.items()}, "closed": False,
            })
            return reply(message, "u", [number])
        if member == "CloseNotification":
            for notification in notifications:
                if notification["id"] == message.body[0]:
                    notification["closed"] = True
            return reply(message)
        if member == "GetCapabilities":
            return reply(message, "as", [["body"]])
        if member == "GetServerInformation":
            return reply(message, "ssss", ["malo-test-desktop", "malo", "1", "1.2"])
    return None


def flatten(layout, out):
    number, properties, children = layout
    label = properties.get("label")
    if number != 0 and properties.get("type", Variant("s", "standard")).value != "separator":
        out.append({
            "id": number,
            "label": label.value if label else "",
            "enabled": properties.get("enabled", Variant("b", True)).value,
        })
    for child in children:
        flatten(child.value, out)
    return out


async def call(bus, destination, path, interface, member, signature="", body=()):
    answer = await bus.call(Message(destination=destination, path=path, interface=interface,
                                    member=member, signature=signature, body=list(body)))
    if answer.message_type == MessageType.ERROR:
        raise RuntimeError(f"{member}: {answer.error_name} {answer.body}")
    return answer.body


async def menu_path(bus):
    name, path = items[-1]
    menu = await call(bus, name, path, PROPERTIES, "Get", "ss", ["org.kde.StatusNotifierItem", "Menu"])
    return name, menu[0].value


async def close(bus, number, reason):
    for notification in notifications:
        if notification["id"] == number:
            notification["closed"] = True
    await bus.send(Message.new_signal("/org/freedesktop/Notifications", NOTIFICATIONS, "NotificationClosed",
                                      "uu", [number, reason]))


async def run(request, bus):
    action = request["do"]
    if action == "items":
        return {"items": items}
    if action == "notifications":
        return {"notifications": notifications}
    if action == "invoke":
        key = request.get("action", "default")
        await bus.send(Message.new_signal("/org/freedesktop/Notifications", NOTIFICATIONS, "ActionInvoked",
                                          "us", [request["id"], key]))
        if key != "default":
            await close(bus, request["id"], 3)
        return {"invoked": request["id"]}
    if action == "dismiss":
        await close(bus, request["id"], 2)
        return {"dismissed": request["id"]}
    if not items:
        return {"error": "no tray item registered"}
    name, path = await menu_path(bus)
    if action == "icon":
        bus_name, item_path = items[-1]
        icon = await call(bus, bus_name, item_path, PROPERTIES, "Get", "ss", ["org.kde.StatusNotifierItem", "IconName"])
        return {"icon": icon[0].value}
    if action == "menu":
        _revision, layout = await call(bus, name, path, "com.canonical.dbusmenu", "GetLayout", "iias", [0, -1, []])
        return {"menu": flatten(layout, [])}
    if action == "click":
        await call(bus, name, path, "com.canonical.dbusmenu", "Event", "isvu",
                   [request["id"], "clicked", Variant("i", 0), 0])
        return {"clicked": request["id"]}
    return {"error": f"unknown command {action}"}


async def main():
    bus = await MessageBus().connect()
    bus.add_message_handler(handle)
    for name in (WATCHER, NOTIFICATIONS):
        await bus.request_name(name)
    print(json.dumps({"ready": True}), flush=True)
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            return
        try:
            answer = await run(json.loads(line), bus)
        except Exception as error:  # answered, so the test sees why
            answer = {"error": str(error)}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
