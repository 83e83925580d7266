// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title DocumentAnchors
/// @notice Anchors a document's composite hash on chain through authorized relayers. Each anchor is only an event:
/// the chain's log is the record, so `anchor` writes no storage and costs little more than the log itself.
contract DocumentAnchors {
    /// @notice `signer` is the relayer that sent the transaction; `timestamp` is the block's.
    event DocumentAnchored(
        bytes32 indexed compositeHash, bytes32 indexed previousTxHash, address indexed signer, uint256 timestamp
    );
    event RelayerAdded(address indexed relayer);
    event RelayerRemoved(address indexed relayer);
    event OwnershipTransferStarted(address indexed previousOwner, address indexed newOwner);
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);

    error NotRelayer(address caller);
    error NotOwner(address caller);
    error NotPendingOwner(address caller);
    error ZeroAddress();

    address public owner;
    /// @notice Ownership moves in two steps (transfer, then accept) so a mistyped address cannot strand the contract.
    address public pendingOwner;
    mapping(address relayer => bool authorized) public isRelayer;

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        _;
    }

    constructor() {
        owner = msg.sender;
        emit OwnershipTransferred(address(0), msg.sender);
    }

    /// @notice Records an anchor. `previousTxHash` links to the transaction of the document's previous anchor
    /// (zero for the first one), so a reader can walk a document's history back through the chain.
    function anchor(bytes32 compositeHash, bytes32 previousTxHash) external {
        if (!isRelayer[msg.sender]) revert NotRelayer(msg.sender);
        emit DocumentAnchored(compositeHash, previousTxHash, msg.sender, block.timestamp);
    }

    function addRelayer(address relayer) external onlyOwner {
        if (relayer == address(0)) revert ZeroAddress();
        isRelayer[relayer] = true;
        emit RelayerAdded(relayer);
    }

    function removeRelayer(address relayer) external onlyOwner {
        isRelayer[relayer] = false;
        emit RelayerRemoved(relayer);
    }

    /// @notice Proposes `newOwner`, who must call `acceptOwnership`; proposing address(0) withdraws a proposal.
    function transferOwnership(address newOwner) external onlyOwner {
        pendingOwner = newOwner;
        emit OwnershipTransferStarted(owner, newOwner);
    }

    function acceptOwnership() external {
        if (msg.sender != pendingOwner) revert NotPendingOwner(msg.sender);
        emit OwnershipTransferred(owner, msg.sender);
        owner = msg.sender;
        pendingOwner = address(0);
    }
}
