(** Devices such as GPUs, and the order of the work they run.

    The OCaml interface of rig's C library, librig-core (<rig/rig.h>): each
    value here is one C call, and its doc says which where it matters. rig
    numbers the work submitted to a device with consecutive values of the
    device's timeline; a point is a device and one of its values. Each
    allocation records, per device, the point of its last write and of its
    last use, and every submit, copy and host access follows the points its
    memory needs: no call names an event or a fence.

    Unless a doc says otherwise:
    - a call that takes a buffer raises [Invalid_argument] if it is dead;
    - a call that uses a lost device, or memory whose work a lost device
      never finished, raises {!Lost};
    - a call that allocates raises {!Out_of_memory} when its device cannot
      provide the bytes after three rounds of reclamation;
    - a call may be made from any thread or domain. One that may take a lock
      of rig's, made inside one (from a finaliser or signal handler that
      runs while rig holds a lock, such as during the collector's run in
      reclamation), raises [Invalid_argument] having done nothing;
    - a call that blocks releases the runtime lock meanwhile, and a pending
      [Sys.Break] (Ctrl-C, with [Sys.catch_break true]) ends its wait
      within 200 ms, having done nothing.

    Memory returns when the OCaml collector finds every buffer over it
    unreachable (or at {!Buffer.free}): it waits for the work that used it,
    then goes to its device's cache. An allocation its budget refuses runs
    the OCaml collector in its second round of reclamation. *)

type t
(** A device. Each device is one value for the life of the process. *)

exception Lost of t * string
(** [Lost (d, why)]: a use that the loss of [d] makes invalid. [why] is the
    driver's message for a fault, ["closed"] after {!close}, the reason given
    to {!fail}, ... It prints as ["NAME lost: why"]. *)

exception Out_of_memory of t * int
(** [Out_of_memory (d, n)]: [d] cannot allocate [n] bytes. *)

val host : t
(** This process's device, named ["CPU"]: its memory is the process's, its
    work host access and the launches of code it links (Image). *)

(** {1 Opening and closing} *)

val open_ : ?machine:t -> 'a Rig_edge.opener -> (t, string) result
(** [open_ o] is the open device named [o.name], or the one [o.make ()]
    opens. [Error why] where it cannot be opened (no such driver or device,
    after {!fail}, every slot held). Raises [Invalid_argument] for a name
    open under another driver, facts that break a rule, or an open of the
    name from inside its own open. Blocks while another thread opens the
    same name.

    [open_ ~machine o] opens it on [machine]'s machine instead (default
    this one): the device of that machine named [o.name], as
    ["NAME@MACHINE"], whose properties are that device's. [Error] once the
    machine's host is lost or closed. Blocks on the network. *)

val open_io : ?machine:t -> 'a Rig_edge.io_opener -> (t, string) result
(** [open_] for an io device, such as a file ({!Rig_edge.file}). rig opens
    io devices of this machine only: [~machine] of another is [Error]. *)

(** {1 Other machines}

    A machine is a host and the devices it drives. A program opens another
    machine's host with {!open_host}, then that machine's devices with
    [open_ ~machine]. It gives each machine it connects to a name of its
    own for the life of the process: a second connection to one address
    under another name is another machine. *)

val open_host : machine:string -> 'a Rig_edge.opener -> (t, string) result
(** [open_host ~machine o] is the host of the machine named [machine]
    (["CPU@MACHINE"]), which [o] ({!Rig_edge.remote}) reaches, or the one
    open. A machine has one host for its life: once it is lost or closed,
    [open_host] of that machine is [Error] for the rest of the process, as
    is every open on the machine; {!close} of it first closes every device
    of its machine. Raises [Invalid_argument] for a name that is not 1 to
    63 of [A-Z a-z 0-9 . _ -], or a machine whose host is open, or still
    opening, through another driver or address. Blocks on the network. *)

val machine : t -> string option
(** [Some m] for a device of the machine named [m], [None] for this
    machine's. Takes no lock. *)

val host_of : t -> t
(** [host_of d] is the host of [d]'s machine: {!host} for a device of this
    machine, and for a device of another machine the host {!open_host}
    opened there (["CPU@MACHINE"]), lost or closed as it may be, since a
    machine has one host for its life. Takes no lock
    ([rig_device_host_of]). *)

val memory_device : string -> (t, string) result
(** [memory_device name] opens the memory device [name]: memory of its own
    in host memory, work that runs in this process before {!submit}
    returns, fills and copies only. Tests use it to stand for a GPU. *)

val close : t -> unit
(** [close d] waits for the work submitted on [d], loses [d] with
    ["closed"] and returns once its driver's stop has returned. Every holder
    of [d] shares the close. Raises [Invalid_argument] for {!host}. A close
    that [Sys.Break] ended finishes when called again. Blocks. *)

(** {1 Properties}

    Set at open, kept once the device is lost; none takes a lock. *)

val name : t -> string

val equal : t -> t -> bool (** [d == d']. *)

val pp : Format.formatter -> t -> unit (** ["NAME"] or ["NAME (lost: why)"]. *)

val arch : t -> string
(** The code the device runs: a host's x86-64 psABI level (["x86-64-v3"])
    or arm64 features, ["memory"] for a memory device, [""] for io. *)

val instruction_set : t -> string

val bus : t -> string option (** The PCI function, where it has one. *)

val runs_on_host : t -> bool (** True for {!host} and memory devices. *)

val computes : t -> bool (** False for an io device only. *)

val alignment : t -> int (** Where a non-empty {!Buffer.create} starts. *)

val cache_bytes : t -> int option (** Its last-level cache, where known. *)

val capability : t -> 'a Rig_edge.capability -> 'a option
(** [capability d k] is the record [d]'s driver declares under [k]'s key,
    read by [k] ({!Rig_edge.capability}), or [None] where it declares none
    there, and on a lost [d]. rig's part takes no lock; the driver's may
    take its own, and block (the remote driver's first query of a machine's
    host asks that machine's server), so the call releases the runtime
    lock meanwhile ([rig_device_capability]). *)

val reaches : t -> t -> bool
(** [reaches d e]: [d]'s work addresses [e]'s own memory through a borrow. *)

(** {1 Timelines} *)

val submitted : t -> int (** The last value assigned on [d]'s timeline. *)

val signaled : t -> int
(** The last value [d] has reported; it commits and waits for nothing. *)

val word : int (** 4: rig orders memory in words of 4 bytes. *)

(** {1 Loss and failure} *)

val lost : t -> string option (** [Some why] once [d] is lost. *)

val fail : string -> unit
(** Fails the process: every device but host is lost with [why], every
    later open is [Error why]. Only the first call acts. *)

val failure : unit -> string option (** The reason of the first {!fail}. *)

(** {1 Budgets} *)

val budget : t -> int (** [max_int] for host at first. *)

val allocated : t -> int (** Bytes held now of memory that counts in the budget. *)

val set_budget : t -> int -> unit
(** Sets the budget, then frees cached memory down to it. Raises
    [Invalid_argument] for a negative budget. *)

val free_cache : t -> unit (** Returns the device's cached memory. *)

val version : unit -> string (** librig-core's version. *)

(** Points: a device's slot and one value of its timeline in one int. *)
module Point : sig
  type device = t
  type t = private int

  val device : t -> device option
  (** The device given the point's value, while no later device has taken
      its slot. *)

  val value : t -> int

  val reached : t -> bool (** For good once true; commits first. Takes no lock. *)

  val wait : t -> unit
  (** Blocks until the point is reached. Raises {!Lost} for a point its lost
      device never reached, [Invalid_argument] for a value not yet given. *)

  val pp : Format.formatter -> t -> unit (** ["NAME:VALUE"]. *)
end

type access = Read | Read_write
(** Accesses to memory: what a buffer admits, what a host access waits
    for, and how fixed memory is used ({!Submission.fixed}); the same type
    as {!Buffer.access}. *)

(** Memory and host access. *)
module Buffer : sig
  type device = t
  type t
  (** A range of bytes of an allocation. Its finaliser releases it: the
      allocation returns once no buffer over it is reachable. *)

  type nonrec access = access = Read | Read_write
  (** What a buffer admits, and what a host access waits for: [Read] the
      last writes of every device, [Read_write] every use. *)

  type kind = Device | Pinned | Mapped
  (** The device's own memory, host memory it maps (in host's budget), or
      device memory the host addresses. *)

  val create : ?kind:kind -> device -> int -> t
  (** [create d n] is a new buffer of [n] bytes on [d], from its cache where
      it holds a fit, with empty stamps. Raises [Invalid_argument] for a
      negative [n] or a kind [d] has none of. Blocks where it reclaims. *)

  val view : ?access:access -> ?off:int -> ?len:int -> t -> t
  (** A buffer over bytes [off, off + len) of [b]'s (all of them), sharing
      its allocation, stamps and claims, admitting [access] (at most [b]'s). *)

  val borrow : device -> t -> t
  (** [borrow d b] is a buffer on [d] over [b]'s bytes, with no copy. Raises
      [Invalid_argument] where [d] does not map the memory. *)

  val free : t -> unit
  (** Frees the allocation now: every buffer over it is dead. *)

  val length : t -> int

  val device : t -> device

  val access : t -> access

  val kind : t -> kind

  val is_dead : t -> bool

  val overlaps : t -> t -> bool (** They hold bytes of one word. *)

  val share_byte : t -> t -> bool

  val host_address : t -> nativeint
  (** The host address of the first byte, or [0n] where the host does not
      address it. A low-level value: it says nothing of order. *)

  val wait : t -> access -> unit
  (** Blocks until host code may read ([Read]) or write ([Read_write]). *)

  val reached : t -> access -> bool (** Whether {!wait} would return now. *)

  type bytes_array = (int, Bigarray.int8_unsigned_elt, Bigarray.c_layout) Bigarray.Array1.t

  val read : t -> (bytes_array -> 'a) -> 'a
  (** [read b f] is [f] of [b]'s bytes in place, once every device's last
      write of them is done. The array is [b]'s memory only while [f] runs.
      Raises [Invalid_argument] for memory the host does not address. *)

  val write : t -> (bytes_array -> 'a) -> 'a
  (** [read], once every use of [b]'s memory is done, for writing. Raises
      [Invalid_argument] for a buffer that admits [Read] only. *)

  val export : t -> bytes_array
  (** Waits once for every use, then gives [b]'s bytes for good: the array
      keeps the memory until it is collected. It is not checked after a loss
      or a {!free}; a [sub] of it does not keep the memory. *)

  val blit_from_string : string -> int -> t -> int -> int -> unit
  (** [blit_from_string s soff b boff len] writes [len] bytes of [s] into
      [b] once every use of [b]'s memory is done. *)

  val blit_from_bytes : bytes -> int -> t -> int -> int -> unit

  val blit_to_bytes : t -> int -> bytes -> int -> int -> unit
  (** [blit_to_bytes b boff dst off len] reads [len] bytes of [b] once every
      device's last write of it is done. *)

  val fill : ?size:int -> t -> int -> unit
  (** [fill ~size b pattern] sets [b] to a pattern of [size] (1, 2 or 4,
      default 1) bytes, little-endian; returns once done. *)

  val submit_fill : ?size:int -> t -> int -> Point.t
  (** {!fill} without waiting: the point of the fill. *)

  val copy : src:t -> dst:t -> unit
  (** Copies [src] into [dst], of one length and sharing no byte; returns
      once the bytes are in [dst]. *)

  val submit_copy : src:t -> dst:t -> Point.t
  (** {!copy} without waiting: the point of the copy. *)

  (** {2 An io device's contents} *)

  val of_io : ?off:int -> device -> int -> t
  (** [of_io ~off d n] is a buffer over bytes [off, off + n) (default
      [off] 0) of io device [d]'s memory as it is, such as a file's
      contents, with no copy and no charge to [d]'s budget; its collection
      gives nothing back. It first moves the collected memory of [d]. The
      bytes need not exist yet: a read past a file's end raises [Sys_error]
      when it happens. Raises [Invalid_argument] for a negative [off] or
      [n] or a device that is not io, {!Lost} for a lost [d]. *)

  val of_bigarray : ?device:device -> ('a, 'b, 'c) Bigarray.Array1.t -> t
  (** [of_bigarray ~device a] is a buffer on [device] (default {!host})
      over [a]'s data, with no copy: the buffer and [a] share their bytes.
      The buffer keeps [a] reachable until rig no longer uses its memory.
      Words count from address 0 for host memory, so the allocation is the
      whole words that hold [a]'s bytes. Another device borrows the memory:
      a memory device takes any, a device that maps host memory only data
      that starts on a page. Takes no lock on the host. Raises
      [Invalid_argument] for a device that does not map it, and for an
      array with no data. *)

  val of_string : ?device:device -> string -> t
  (** [of_string ~device s] is a new buffer on [device] (default {!host})
      holding a copy of [s]'s bytes. Moves collected memory first, as
      {!create} does. *)
end

(** Code loaded on a device: on host, relocatable ELF objects it links. *)
module Image : sig
  type device = t
  type t

  type fn
  (** A function of an image; it keeps its image. *)

  val load : device -> string -> (t, string) result
  (** [load d obj] loads [obj]'s code on [d]: on host, links a relocatable
      ELF object once. [Error why] for an object the linking rules refuse;
      [Invalid_argument] for a device that loads no code. *)

  val resolve : t -> string -> fn option
  (** The named function, or [None]. Raises [Invalid_argument] for one the
      device cannot run. *)

  val device : t -> device

  val image : fn -> t

  val name : fn -> string

  val params : fn -> int (** Its parameter bytes where the device states them, else 0. *)

  val threads : fn -> int (** The most threads of a group ([max_int]: no limit). *)

  val entry : fn -> int64 (** The address an {!Submission.entry} ref stores. *)
end

(** Prepared submissions: work described once and submitted many times. *)
module Submission : sig
  type device = t
  type t

  type ref
  (** A launch's ref: before the launch runs, submit stores at byte [at] of
      its parameters the address of what the ref names. *)

  type part

  val read : int -> at:int -> ref (** The buffer of slot [i], read. *)

  val write : int -> at:int -> ref (** ... written. *)

  val read_write : int -> at:int -> ref (** ... read and written. *)

  val entry : Image.fn -> at:int -> ref (** Another image's function. *)

  val fixed : ?access:Buffer.access -> Buffer.t -> at:int -> ref
  (** A buffer the submission holds from make on, in no slot. *)

  val unordered : ref -> ref
  (** Its use follows no other work on the memory beyond device order, and
      nothing later follows it: the program orders it. *)

  val launch : ?refs:ref array -> Image.fn -> params:int -> part
  (** A launch of [f] whose runs hold [params] bytes of parameters. *)

  val copy : src:int -> dst:int -> part (** A copy between two slots. *)

  val fill : ?size:int -> int -> int -> part (** [fill ~size slot pattern]. *)

  val words : int array -> part (** The driver's own 32-bit words, as they are. *)

  val unordered_part : part -> part

  val make : ?keep:'a -> device -> part array -> t
  (** [make ~keep d parts]. Raises [Invalid_argument] for a part [d] has no queue
      for, slots not named from 0, a dead or foreign fixed buffer, ...

      [keep], where given, is a value the submission keeps reachable, such
      as what its launches' code reads through addresses rig does not see:
      rig lets go of it once the submission is collected and the work
      submitted on its device until the next call that moves that
      device's collected memory is done, at that call, or at a lost
      device's stop; it is dropped at the end of the collector's next
      major cycle after ([rig_submission_keep]). *)

  val slots : t -> int (** The buffers a submit passes. *)

  val block : t -> int -> int
  (** [block s i] is the block of launch part [i], which a run's setters
      take. Raises [Invalid_argument] for a part that is no launch. *)

  val address : t -> Buffer.t -> int64
  (** [address s b] is the address [s]'s device's code uses for [b]'s
      first byte: what a ref of [b] stores in [s]'s launches (on host, its
      host address). A low-level value: valid while [b]'s memory lives, and
      it says nothing of order. Takes no lock. Raises [Invalid_argument]
      for a dead [b], one [s]'s device does not address as it is, and
      memory with no address. *)

  (** Runs: one submit's grids and parameters. Each touches only the
      caller's run and takes no lock. *)
  module Run : sig
    type submission = t
    type t

    val submission : t -> submission

    val groups : t -> int -> int -> int -> int -> unit (** [groups r k x y z]. *)

    val threads : t -> int -> int -> int -> int -> unit (** Threads of a group. *)

    val int64 : t -> int -> int -> int64 -> unit (** [int64 r k off v]. *)

    val int : t -> int -> int -> int -> unit (** An int as 64 bits. *)

    val int32 : t -> int -> int -> int32 -> unit

    val float : t -> int -> int -> float -> unit (** As 32 bits. *)

    val double : t -> int -> int -> float -> unit

    val string : t -> int -> int -> string -> unit (** Its bytes. *)

    val shared : t -> int -> int -> unit (** Shared memory per group. *)
  end

  val take : t -> Run.t
  (** A run for the calling thread. Raises [Invalid_argument] while all 256
      runs of [s] are taken and none was submitted since. *)
end

val submit : ?waits:Point.t array -> Submission.Run.t -> buffers:Buffer.t array -> Point.t
(** [submit ~waits r ~buffers] runs [r]'s submission once, with [buffers.(i)]
    as slot [i], after the points of [waits] besides those its memory orders,
    and returns its point. It frees [r], also when it raises. On host the
    work is done when it returns. Raises [Invalid_argument] for a submit
    that is not valid (a wrong count of buffers, a dead one, a write through
    a [Read] buffer, ...). Blocks for room and for points waited on the host,
    with the domain's lock released; where it would not wait (a host launch
    of one group, a device with room whose work follows no point of another
    device not reached) it keeps the lock, so the work a host or memory
    device runs at submit holds up other domains' collections meanwhile.
    Allocates nothing on the OCaml heap. *)

(** Claims: a claim records that something reads an allocation, so that a
    donation (a function writing its result over an argument it no longer
    needs) writes only memory nothing else reads. Views and borrows share
    their allocation's claims. Every function here takes no lock. *)
module Claim : sig
  type t

  val with_ : Buffer.t -> (t -> 'a) -> 'a
  (** [with_ b f] runs [f c] with [b]'s memory held exclusive by the calling
      thread through the claim [c], which names no access and so depends on
      every point, as a write does ({!Lost} where a write would raise).
      Meanwhile other threads' submits, copies and host accesses of the
      memory, and a second [with_], raise [Invalid_argument]. [c] is valid
      until [f] returns. *)

  val only : t -> bool (** Whether [c] is the only claim on its memory. *)

  val consume : t -> Buffer.t
  (** Consumes the memory [c] holds exclusive as its only claim: every
      buffer made over it until now is dead, and the result, a buffer over
      the whole allocation with its stamps, takes the donor's result. Raises
      [Invalid_argument] unless [c] is [with_]'s, on its thread, and the only
      claim. *)

  val hold : Buffer.t -> t
  (** A claim that reads [b]'s memory until the claim is collected. *)

  val read : Buffer.t -> (t -> 'a) -> 'a
  (** [read b f] runs [f c] with [c] a claim that reads [b]'s memory, which
      ends when [f] returns or raises: meanwhile a donor's {!only} is
      false, so it writes over nothing [f] reads. Taking it is a read of
      the memory: {!Lost} where a read would raise (the point of a write a
      lost device never reached), and [Invalid_argument] while another
      thread holds the memory by {!with_}. It waits for nothing. *)
end

(** Values per device: a library keeps values per device under a key, such
    as the image it loaded on each device. *)
module Local : sig
  type 'a key

  val new_key : (t -> 'a) -> 'a key
  (** A key whose value on a device is what [init d] makes at the first
      {!get} on that device. It runs inside a lock of rig's: a call of it
      that may take a lock raises [Invalid_argument]. An [init] that raises
      makes a value whose {!get} raises that exception. Keys live for the
      process (256 at most). *)

  val get : 'a key -> t -> 'a
  (** [d]'s value of [k], made at the first get on [d]. A reopened name is a
      new device, with values of its own. The value goes once the device's
      stop has returned. Takes no lock once the value exists. Raises {!Lost}
      for a lost [d] without the value. *)
end

(** Profiles: the timed work of every device that times work. While a
    profile is being taken, each device whose driver times work (the host
    by its clock, GPUs by their own) writes a record per part it runs into
    a ring of its own; a memory or io device times no work. Every function
    here but {!take} takes no lock. *)
module Profile : sig
  type kind = Copy | Fill | Launch | Words (** What a part was. *)

  type record = {
    device : string;  (** Its device's name, ["CPU"] for the host. *)
    queue : int;  (** The device's queue it ran on. *)
    kind : kind;
    part : int;  (** Its index among its submission's parts. *)
    name : string;  (** The function a launch ran, else ["copy"], ["fill"] or ["words"]. *)
    point : Point.t;  (** The work's point. *)
    start_ns : int;  (** CLOCK_MONOTONIC, nanoseconds. *)
    end_ns : int;  (** At least [start_ns]. *)
  }
  (** One part of one value's work on a device, as its driver timed it. *)

  type t (** Taken records; its finaliser frees them. *)

  val start : ?records:int -> unit -> unit
  (** Starts taking a profile, or goes on with the one being taken. Each
      device gets a ring of at least [records] records (rounded up to a
      power of two; default 16384) at its first submit from then on: that
      submit allocates and may block while the driver sets up its clock;
      later submits allocate nothing for it. Raises [Invalid_argument] for
      a negative count. *)

  val stop : unit -> unit (** Stops timing work; records written wait for {!take}. *)

  val active : unit -> bool (** Whether a profile is being taken. *)

  val take : unit -> t
  (** The records every device wrote since the last take, sorted by start.
      A GPU's record comes once its driver saw the value reached (a wait, a
      later submit, the close). Raises [Out_of_memory] for no memory. May
      lock: it releases the runtime lock. *)

  val records : t -> record array

  val dropped : t -> int
  (** The records missing because a device's ring was full: take more
      often, or start with more [records]. *)

  val chrome : t -> string
  (** The profile as a Chrome trace (the Trace Event Format's JSON object
      form, which Perfetto and chrome://tracing load): a process per
      device, a thread per queue, an event per record, times in
      microseconds from the profile's first start. *)

  val save_chrome : t -> string -> unit
  (** [save_chrome p path] writes {!chrome} into the file [path], made or
      truncated. Raises [Sys_error] where it cannot be written. Blocks on
      the file system. *)
end

(**/**)

(** Not for programs: what Rig_remote needs of Rig's representation. *)
module Private : sig
  val run : Submission.t -> int -> Submission.Run.t
end
