(** What opens a device: the openers of the drivers rig loads.

    A driver is a C plugin, librig-driver-NAME.so, found on
    [RIG_DRIVER_PATH] and then in rig's install folder; an opener names one
    of its devices. Drivers are written in C against <rig/edge.h>: this
    module gives no way to write one in OCaml. *)

type plugin
(** A device of a C driver, as its opener's [make] returns it. *)

type 'a opener = private {
  name : string;  (** The name the device opens under: ["DRIVER:ARGS"]. *)
  make : unit -> ('a, string) result;
      (** Opens the device, or returns the one open under [name];
          [Error why] where it cannot be opened. [Rig.open_] calls it. *)
  device : 'a -> Rig_raw.device;
}

val plugin : string -> plugin opener
(** [plugin "DRIVER:ARGS"] is the opener of the device that driver DRIVER
    opens from ARGS, such as ["memory:M"], ["vulkan:0"] or ["io:/tmp/f"]. *)

type 'a io_opener = private {
  io_name : string;
  io_make : unit -> ('a, string) result;
  io_device : 'a -> Rig_raw.device;
}

val file : ?create:int -> ?read_only:bool -> ?durable:bool -> string -> plugin io_opener
(** [file path] opens the file [path] as an io device (rig's io library):
    [~create:n] creates it, or grows it, to [n] bytes; [~read_only] opens
    it for reading; [~durable] makes each write durable when it returns. *)
